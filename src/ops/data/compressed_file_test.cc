// ZLIB and GZIP TFRecord files: written through NewDeflatingFile, read back through
// NewInflatingFile by the record reader, including out-of-order reads and damaged streams.
#include "ops/data/compressed_file.h"

#include "base/record_io.h"
#include "base/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow::data {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> Records() {
  std::vector<std::string> out = {"", "a", std::string(300000, 'x'), "last"};
  for (int i = 0; i < 1000; ++i) out.push_back(std::to_string(i * 7919));
  return out;
}

void WriteRecords(const std::string& path, const std::string& compression, bool flush_each) {
  auto file = NewDeflatingFile(Env::Default()->NewWritableFile(path).value(), compression);
  ASSERT_TRUE(file.ok()) << file.status();
  RecordWriter w(file->get());
  for (const std::string& r : Records()) {
    ASSERT_TRUE(w.WriteRecord(r).ok());
    if (flush_each) ASSERT_TRUE(w.Flush().ok());
  }
  ASSERT_TRUE((*file)->Close().ok());
}

StatusOr<std::vector<std::string>> ReadRecords(const std::string& path, const std::string& compression) {
  ASSIGN_OR_RETURN(auto raw, Env::Default()->NewRandomAccessFile(path));
  ASSIGN_OR_RETURN(auto file, NewInflatingFile(std::move(raw), compression));
  RecordReader reader(file.get());
  std::vector<std::string> out;
  uint64_t offset = 0;
  for (;;) {
    std::string r;
    Status s = reader.ReadRecord(&offset, &r);
    if (absl::IsOutOfRange(s)) return out;
    RETURN_IF_ERROR(s);
    out.push_back(r);
  }
}

TEST(CompressedFileTest, RoundTripsZlibAndGzip) {
  TempDir dir;
  for (const char* c : {"", "ZLIB", "GZIP"}) {
    for (bool flush : {false, true}) {
      const std::string path = dir.File(std::string("r.") + c + (flush ? ".flushed" : ""));
      WriteRecords(path, c, flush);
      auto got = ReadRecords(path, c);
      ASSERT_TRUE(got.ok()) << c << ": " << got.status();
      EXPECT_EQ(*got, Records()) << c;
    }
  }
  std::string gz = *Env::Default()->ReadFile(dir.File("r.GZIP"));
  EXPECT_EQ(gz.substr(0, 2), "\x1f\x8b");
  EXPECT_LT(gz.size(), Env::Default()->ReadFile(dir.File("r.")).value().size() / 10);
  EXPECT_EQ(Env::Default()->ReadFile(dir.File("r.ZLIB")).value()[0], '\x78');
}

TEST(CompressedFileTest, ReadsAtAnEarlierOffsetAgain) {
  TempDir dir;
  WriteRecords(dir.File("r"), "GZIP", false);
  auto file = NewInflatingFile(Env::Default()->NewRandomAccessFile(dir.File("r")).value(), "GZIP");
  ASSERT_TRUE(file.ok());
  char a[4], b[4];
  auto late = (*file)->Read(300000, 4, a);
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(*late, "xxxx");
  auto early = (*file)->Read(12, 1, b);  // the first record's (empty) data is followed by its footer
  ASSERT_TRUE(early.ok());
  EXPECT_EQ(early->size(), 1u);
  EXPECT_TRUE(absl::IsOutOfRange((*file)->Read(uint64_t{1} << 40, 4, a).status()));
}

TEST(CompressedFileTest, DamagedOrCutStreamsAreDataLoss) {
  TempDir dir;
  WriteRecords(dir.File("r"), "ZLIB", false);
  std::string bytes = *Env::Default()->ReadFile(dir.File("r"));
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(dir.File("cut"), bytes.substr(0, bytes.size() / 2)).ok());
  auto got = ReadRecords(dir.File("cut"), "ZLIB");
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(absl::IsDataLoss(got.status())) << got.status();
  EXPECT_THAT(got.status().message(), HasSubstr(dir.File("cut")));
  bytes[bytes.size() / 3] ^= 0x55;
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(dir.File("bad"), bytes).ok());
  got = ReadRecords(dir.File("bad"), "ZLIB");
  EXPECT_FALSE(got.ok());
  EXPECT_TRUE(absl::IsDataLoss(got.status())) << got.status();
  // An uncompressed file read as GZIP.
  WriteRecords(dir.File("plain"), "", false);
  got = ReadRecords(dir.File("plain"), "GZIP");
  EXPECT_TRUE(absl::IsDataLoss(got.status())) << got.status();
}

TEST(CompressedFileTest, UnknownTypesAreInvalidArgument) {
  TempDir dir;
  EXPECT_TRUE(CheckCompressionType("").ok());
  EXPECT_TRUE(absl::IsInvalidArgument(CheckCompressionType("BZIP2")));
  EXPECT_TRUE(absl::IsInvalidArgument(CheckCompressionType("gzip")));
  auto w = NewDeflatingFile(Env::Default()->NewWritableFile(dir.File("x")).value(), "SNAPPY");
  EXPECT_TRUE(absl::IsInvalidArgument(w.status()));
}

}  // namespace
}  // namespace dflow::data
