// TFRecord framing (TFRecordDataset, event files): read every record until the end or the
// first damaged one, with the default and with a small record limit.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/record_io.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dflow;
  fuzz::MemFile file("fuzz.tfrecord", std::string(reinterpret_cast<const char*>(data), size));
  for (uint64_t limit : {uint64_t{1} << 31, uint64_t{64}}) {
    RecordReader reader(&file, limit);
    uint64_t offset = 0;
    std::string record;
    while (true) {
      const uint64_t before = offset;
      Status s = reader.ReadRecord(&offset, &record);
      if (!s.ok()) {
        fuzz::Note("read", s);
        FUZZ_CHECK(offset == before);
        break;
      }
      FUZZ_CHECK(record.size() <= limit);
      FUZZ_CHECK(offset == before + 16 + record.size() && offset <= size);
    }
  }
  return 0;
}
