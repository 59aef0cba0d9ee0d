// TensorProto bytes (Const nodes' values, fed tensors, RecvTensor replies): parse, convert to a
// Tensor, and back; the round trip must give the same tensor.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fuzz/fuzz_util.h"
#include "proto/tensor.pb.h"
#include "tensor/tensor_proto.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dflow;
  static const bool quiet = fuzz::QuietProtobuf();
  (void)quiet;
  proto::TensorProto p;
  if (!p.ParseFromArray(data, static_cast<int>(size))) return 0;
  (void)PartialShapeFromProto(p.tensor_shape());
  StatusOr<Tensor> t = TensorFromProto(p);
  fuzz::Note("from proto", t.status());
  if (!t.ok()) return 0;
  (void)t->DebugString();

  // One repeated value may fill up to kMaxProtoTensorBytes (1 GiB, by design): the round trip
  // below would triple that past the fuzzer's 2 GiB limit, so it checks tensors up to 64 MiB.
  if (t->TotalBytes() > (size_t{64} << 20)) return 0;
  proto::TensorProto q;
  TensorToProto(*t, &q);
  StatusOr<Tensor> u = TensorFromProto(q);
  FUZZ_CHECK(u.ok());
  FUZZ_CHECK(u->dtype() == t->dtype());
  FUZZ_CHECK(u->shape() == t->shape());
  if (t->dtype() == DT_STRING) {
    for (int64_t i = 0; i < t->NumElements(); ++i) FUZZ_CHECK(t->flat<std::string>()[i] == u->flat<std::string>()[i]);
  } else if (t->TotalBytes() > 0 && t->dtype() != DT_RESOURCE && t->dtype() != DT_VARIANT) {
    FUZZ_CHECK(u->TotalBytes() == t->TotalBytes());
    FUZZ_CHECK(std::memcmp(u->raw_data(), t->raw_data(), t->TotalBytes()) == 0);
  }
  return 0;
}
