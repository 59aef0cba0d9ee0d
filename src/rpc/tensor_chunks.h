// Assembles a tensor that arrives as a stream of RecvTensorChunk messages (proto/worker.proto),
// reading each message's wire format where it was received: the `data` field is copied from the
// receive buffers straight into the tensor, and only the other (small) fields are parsed as a
// message. Parsing the whole message would first copy every chunk's bytes into a string.
//
// No gRPC here: a message is given as the pieces of memory that hold it, in order.
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/status.h"
#include "distributed/worker_interface.h"

namespace dflow::rpc {

class TensorChunkAssembler {
 public:
  // `from` names the sender in errors ("/job:ps/replica:0/task:0 (127.0.0.1:2222)").
  explicit TensorChunkAssembler(std::string from) : from_(std::move(from)) {}

  // One message. Fails with DataLoss naming the sender and what was wrong.
  Status Add(absl::Span<const absl::string_view> pieces);

  // After the stream ended: the tensor, when every byte it announced arrived.
  Status Finish(RecvTensorResult* result);

 private:
  Status Malformed(const std::string& what) const;
  Status Begin(const std::string& head);
  Status Append(const std::vector<absl::string_view>& data, size_t size);

  const std::string from_;
  bool got_first_ = false;
  bool is_dead_ = false;
  Tensor tensor_;
  size_t expected_ = 0;
  size_t received_ = 0;
};

}  // namespace dflow::rpc
