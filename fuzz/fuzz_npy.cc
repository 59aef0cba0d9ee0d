// .npy files (`dflow run --feed x=@file.npy`): parse, write back, parse again: same tensor.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fuzz/fuzz_util.h"
#include "tensor/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dflow;
  StatusOr<Tensor> t = ParseNpy(absl::string_view(reinterpret_cast<const char*>(data), size));
  fuzz::Note("parse", t.status());
  if (!t.ok()) return 0;
  StatusOr<std::string> bytes = SerializeNpy(*t);
  FUZZ_CHECK(bytes.ok());
  StatusOr<Tensor> u = ParseNpy(*bytes);
  FUZZ_CHECK(u.ok());
  FUZZ_CHECK(u->dtype() == t->dtype() && u->shape() == t->shape());
  FUZZ_CHECK(u->TotalBytes() == t->TotalBytes());
  if (t->TotalBytes() > 0) FUZZ_CHECK(std::memcmp(u->raw_data(), t->raw_data(), t->TotalBytes()) == 0);
  return 0;
}
