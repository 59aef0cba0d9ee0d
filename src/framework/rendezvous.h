// Rendezvous: where a Send and its Recv meet within one step. A key names the producer device,
// the consumer device, the tensor and the frame/iteration. The in-process table lives in
// runtime/; the cross-task one (RecvTensor RPC) in distributed/.
#pragma once

#include <functional>
#include <string>

#include "absl/strings/string_view.h"
#include "base/status.h"
#include "tensor/tensor.h"

namespace dflow {

class Rendezvous {
 public:
  // The tensor is passed by value so that a receiver can take it over: a consumer that finds
  // itself the only holder (Assign adopting a received value) then needs no copy.
  using DoneCallback = std::function<void(const Status&, Tensor, bool is_dead)>;
  virtual ~Rendezvous() = default;

  // Stores `value` for `key`, or hands it to a waiting receiver. Never blocks.
  virtual Status Send(const std::string& key, const Tensor& value, bool is_dead) = 0;
  // Calls `done` once, when the value for `key` is there or the rendezvous is aborted.
  virtual void RecvAsync(const std::string& key, DoneCallback done) = 0;
  // Fails every pending and future Recv with `status`.
  virtual void StartAbort(const Status& status) = 0;
};

// A rendezvous key: "<send_device>;<incarnation as 16 hex digits>;<recv_device>;<edge name>;
// <frame id>:<iteration>", TensorFlow's layout. The edge name is the _Send's tensor_name attr.
struct RendezvousKey {
  std::string send_device;  // full device name
  uint64_t send_device_incarnation = 0;
  std::string recv_device;
  std::string edge_name;
  int64_t frame_id = 0;
  int64_t iteration = 0;
};
std::string CreateRendezvousKey(const RendezvousKey& k);
// InvalidArgument quoting the key when it does not have the five parts.
Status ParseRendezvousKey(absl::string_view key, RendezvousKey* out);

}  // namespace dflow
