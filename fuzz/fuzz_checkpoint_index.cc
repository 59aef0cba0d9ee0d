// The index of a V2 checkpoint (a LevelDB table: blocks, restarts, varints, Snappy): read the
// table, decode the input as a Snappy block too, and open it as a bundle's index (header and
// entry protos, slice lists) without data files.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/table.h"
#include "fuzz/fuzz_util.h"
#include "tensor/tensor_bundle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dflow;
  static const bool quiet = fuzz::QuietProtobuf();
  (void)quiet;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  fuzz::MemFile file("fuzz.index", bytes);
  auto table = table::ReadTable(file, bytes.size());
  if (table.ok()) {
    for (size_t i = 1; i < table->size(); ++i) FUZZ_CHECK((*table)[i - 1].first < (*table)[i].first);
  }
  auto snappy = table::SnappyUncompress(bytes);
  if (snappy.ok()) FUZZ_CHECK(snappy->size() <= 32 * bytes.size() + 64);

  fuzz::MemEnv env;
  env.Put(BundleIndexFilename("ckpt"), bytes);
  auto reader = BundleReader::Open(&env, "ckpt");
  fuzz::Note("open", reader.status());
  if (!reader.ok()) return 0;
  for (const std::string& name : (*reader)->TensorNames()) {
    DType dtype;
    TensorShape shape;
    (void)(*reader)->GetDTypeAndShape(name, &dtype, &shape);
    (void)(*reader)->Lookup(name);
  }
  return 0;
}
