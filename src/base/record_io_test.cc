// RecordReader against damaged lengths (found by fuzz/fuzz_tfrecord.cc; the corpus and
// regressions of that target replay as the ctest entry fuzz_replay_tfrecord).
#include <algorithm>
#include <cstring>
#include <string>

#include "base/crc32c.h"
#include "base/record_io.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

// An in-memory file that remembers the largest read asked of it.
class CountingFile : public RandomAccessFile {
 public:
  explicit CountingFile(std::string bytes) : bytes_(std::move(bytes)) {}
  StatusOr<absl::string_view> Read(uint64_t offset, size_t n, char* scratch) const override {
    largest_read_ = std::max(largest_read_, n);
    if (offset >= bytes_.size()) return errors::OutOfRange("past the end");
    size_t len = std::min<uint64_t>(n, bytes_.size() - offset);
    std::memcpy(scratch, bytes_.data() + offset, len);
    return absl::string_view(scratch, len);
  }
  const std::string& path() const override { return path_; }
  size_t largest_read() const { return largest_read_; }

 private:
  std::string bytes_, path_ = "counting";
  mutable size_t largest_read_ = 0;
};

// A header announcing `length` bytes, with a valid checksum, and a few bytes of data.
std::string ForgedRecord(uint64_t length) {
  std::string out(12, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(length >> (8 * i));
  const uint32_t crc = crc32c::Mask(crc32c::Value(out.data(), 8));
  for (int i = 0; i < 4; ++i) out[8 + i] = static_cast<char>(crc >> (8 * i));
  return out + "only a few bytes";
}

TEST(RecordReaderLimitsTest, AForgedLengthInAShortFileIsDataLossWithoutABigAllocation) {
  CountingFile file(ForgedRecord(uint64_t{1} << 31));  // the default limit
  RecordReader reader(&file);
  uint64_t offset = 0;
  std::string record;
  Status s = reader.ReadRecord(&offset, &record);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(s.message().find("Truncated record at offset 0"), std::string::npos) << s;
  EXPECT_EQ(offset, 0u);
  // Reads (and the buffer behind them) stay within 1 MiB of what the file holds.
  EXPECT_LE(file.largest_read(), size_t{1} << 20);
}

TEST(RecordReaderLimitsTest, ALengthOverTheLimitIsDataLoss) {
  CountingFile file(ForgedRecord(1000));
  RecordReader reader(&file, 999);
  uint64_t offset = 0;
  std::string record;
  Status s = reader.ReadRecord(&offset, &record);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(s.message().find("more than the limit of 999"), std::string::npos) << s;
}

TEST(RecordReaderLimitsTest, ARecordLargerThanOneReadStepRoundTrips) {
  const std::string data(3 * (1 << 20) + 5, 'q');  // read in growing steps
  CountingFile file(EncodeRecordHeader(data) + data + EncodeRecordFooter(data));
  RecordReader reader(&file);
  uint64_t offset = 0;
  std::string record;
  ASSERT_TRUE(reader.ReadRecord(&offset, &record).ok());
  EXPECT_EQ(record, data);
  EXPECT_EQ(offset, data.size() + 16);
  EXPECT_TRUE(absl::IsOutOfRange(reader.ReadRecord(&offset, &record)));
}

}  // namespace
}  // namespace dflow
