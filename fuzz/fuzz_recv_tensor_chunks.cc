// The RecvTensor chunk stream a peer sends (TensorChunkAssembler reads each message's wire format
// in the pieces gRPC received it in). Input: one byte k (each message is cut into pieces of k
// bytes; 0: one piece), then messages, each a 2-byte little-endian length and that many bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "rpc/tensor_chunks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dflow;
  static const bool quiet = fuzz::QuietProtobuf();
  (void)quiet;
  if (size < 1) return 0;
  const size_t k = data[0];
  absl::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  rpc::TensorChunkAssembler assembler("/job:fuzz/replica:0/task:0");
  while (in.size() >= 2) {
    size_t n = static_cast<uint8_t>(in[0]) | static_cast<size_t>(static_cast<uint8_t>(in[1])) << 8;
    in.remove_prefix(2);
    n = std::min(n, in.size());
    absl::string_view message = in.substr(0, n);
    in.remove_prefix(n);
    std::vector<absl::string_view> pieces;
    if (k == 0) {
      pieces.push_back(message);
    } else {
      for (size_t off = 0; off < message.size(); off += k) pieces.push_back(message.substr(off, k));
    }
    Status added = assembler.Add(pieces);
    fuzz::Note("add", added);
    if (!added.ok()) return 0;
  }
  RecvTensorResult result;
  Status finished = assembler.Finish(&result);
  fuzz::Note("finish", finished);
  if (finished.ok() && !result.is_dead) {
    FUZZ_CHECK(result.tensor.IsInitialized());
    (void)result.tensor.DebugString();
  }
  return 0;
}
