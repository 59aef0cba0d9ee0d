// A whole V2 checkpoint, as RestoreV2 and `dflow inspect` read it: the input is a 4-byte
// little-endian length n, the index (n bytes), then the data; every data shard the index names
// reads those same data bytes. Every tensor is looked up whole and as a slice.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "tensor/tensor_bundle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dflow;
  static const bool quiet = fuzz::QuietProtobuf();
  (void)quiet;
  auto [index, contents] = fuzz::SplitLengthPrefixed(absl::string_view(reinterpret_cast<const char*>(data), size));
  fuzz::MemEnv env;
  env.Put(BundleIndexFilename("ckpt"), std::string(index));
  auto reader = BundleReader::Open(&env, "ckpt");
  fuzz::Note("open", reader.status());
  if (!reader.ok()) return 0;
  const int shards = (*reader)->num_shards();
  for (int i = 0; i < shards && i < 16; ++i) env.Put(BundleDataFilename("ckpt", i, shards), std::string(contents));
  for (const std::string& name : (*reader)->TensorNames()) {
    DType dtype;
    TensorShape shape;
    if (!(*reader)->GetDTypeAndShape(name, &dtype, &shape).ok()) continue;
    StatusOr<Tensor> t = (*reader)->Lookup(name);
    fuzz::Note(name.c_str(), t.status());
    if (t.ok()) FUZZ_CHECK(t->dtype() == dtype && t->shape() == shape);
    if (shape.dims() > 0 && shape.dim_size(0) > 0) {
      std::vector<int64_t> starts(shape.dims(), 0), lengths(shape.dims());
      for (int d = 0; d < shape.dims(); ++d) lengths[d] = shape.dim_size(d);
      starts[0] = shape.dim_size(0) - 1;
      lengths[0] = 1;
      StatusOr<Tensor> part = (*reader)->LookupSlice(name, TensorSlice::FromBox(starts, lengths));
      if (part.ok()) FUZZ_CHECK(part->dtype() == dtype && part->dim_size(0) == 1);
    }
  }
  return 0;
}
