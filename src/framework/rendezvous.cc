#include "framework/rendezvous.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "framework/device_name.h"

namespace dflow {

std::string CreateRendezvousKey(const RendezvousKey& k) {
  return absl::StrCat(k.send_device, ";", absl::StrFormat("%016x", k.send_device_incarnation), ";", k.recv_device, ";",
                      k.edge_name, ";", k.frame_id, ":", k.iteration);
}

Status ParseRendezvousKey(absl::string_view key, RendezvousKey* out) {
  auto bad = [&](absl::string_view why) {
    return errors::InvalidArgument("Invalid rendezvous key '", key, "': ", why,
                                   " (expected 'send_device;incarnation;recv_device;edge_name;frame:iteration')");
  };
  std::vector<absl::string_view> parts = absl::StrSplit(key, ';');
  if (parts.size() != 5) return bad(absl::StrCat("it has ", parts.size(), " parts separated by ';', not 5"));
  for (int i : {0, 2}) {
    StatusOr<DeviceName> d = DeviceName::Parse(parts[i]);
    if (!d.ok() || !d->IsFullySpecified()) {
      return bad(absl::StrCat(i == 0 ? "the send" : "the receive", " device '", parts[i],
                              "' is not a full device name"));
    }
  }
  uint64_t incarnation = 0;
  if (parts[1].empty() || parts[1].size() > 16 || !absl::SimpleHexAtoi(parts[1], &incarnation) ||
      parts[1].find_first_not_of("0123456789abcdefABCDEF") != absl::string_view::npos) {
    return bad(absl::StrCat("the incarnation '", parts[1], "' is not a 64-bit hex number"));
  }
  if (parts[3].empty()) return bad("the edge name is empty");
  std::vector<absl::string_view> fi = absl::StrSplit(parts[4], ':');
  int64_t frame = 0, iter = 0;
  if (fi.size() != 2 || !absl::SimpleAtoi(fi[0], &frame) || !absl::SimpleAtoi(fi[1], &iter)) {
    return bad(absl::StrCat("the frame and iteration '", parts[4], "' are not 'frame_id:iteration'"));
  }
  out->send_device = std::string(parts[0]);
  out->send_device_incarnation = incarnation;
  out->recv_device = std::string(parts[2]);
  out->edge_name = std::string(parts[3]);
  out->frame_id = frame;
  out->iteration = iter;
  return absl::OkStatus();
}

}  // namespace dflow
