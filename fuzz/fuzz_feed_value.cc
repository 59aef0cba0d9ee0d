// The CLI's feed syntax (`dflow run --feed x=[[1,2],[3,4]]`): the first byte picks the dtype
// the placeholder has, the rest is the text. `@file.npy` reads a file, so it is left out here
// (fuzz_npy covers the file's bytes).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_util.h"
#include "tools/feed_value.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dflow;
  if (size < 1) return 0;
  static constexpr DType kTypes[] = {DT_FLOAT, DT_DOUBLE, DT_INT32,    DT_INT64,  DT_UINT8,
                                     DT_BOOL,  DT_STRING, DT_RESOURCE, DT_VARIANT};
  const DType dtype = kTypes[data[0] % (sizeof(kTypes) / sizeof(kTypes[0]))];
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (!text.empty() && text[0] == '@') return 0;
  StatusOr<Tensor> t = tools::ParseFeedValue(text, dtype);
  fuzz::Note("parse", t.status());
  if (t.ok()) {
    FUZZ_CHECK(t->dtype() == dtype);
    (void)t->DebugString();
  }
  return 0;
}
