// Env's file calls, CRC32C and TFRecord framing.
#include <fstream>
#include <string>

#include "base/crc32c.h"
#include "base/env.h"
#include "base/record_io.h"
#include "base/temp_dir.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

std::string TestData(absl::string_view name) { return JoinPath(DFLOW_SOURCE_DIR "/testdata/tf", name); }

// ---- CRC32C ----

// Reference: bit-at-a-time CRC32C, independent of the table and SSE4.2 paths.
uint32_t NaiveCrc32c(absl::string_view s) {
  uint32_t c = 0xffffffffu;
  for (unsigned char ch : s) {
    c ^= ch;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
  }
  return ~c;
}

TEST(Crc32cTest, KnownValues) {
  EXPECT_EQ(crc32c::Value("123456789"), 0xe3069283u);  // the standard check value
  EXPECT_EQ(crc32c::Value(""), 0u);
  std::string zeros(32, '\0');
  EXPECT_EQ(crc32c::Value(zeros), 0x8a9136aau);  // RFC 3720, 32 bytes of zeros
  std::string ones(32, '\xff');
  EXPECT_EQ(crc32c::Value(ones), 0x62a8ab43u);
}

TEST(Crc32cTest, MatchesBitwiseReferenceAtEveryLengthAndAlignment) {
  std::string data;
  for (int i = 0; i < 300; ++i) data.push_back(static_cast<char>(i * 37 + 11));
  for (size_t start = 0; start < 9; ++start) {
    for (size_t n = 0; start + n <= data.size(); n += 7) {
      absl::string_view s(data.data() + start, n);
      ASSERT_EQ(crc32c::Value(s), NaiveCrc32c(s)) << start << " " << n;
    }
  }
}

TEST(Crc32cTest, ExtendEqualsWhole) {
  std::string a = "hello ", b = "world";
  EXPECT_EQ(crc32c::Extend(crc32c::Value(a), b.data(), b.size()), crc32c::Value(a + b));
}

TEST(Crc32cTest, MaskRoundTripsAndDiffers) {
  for (uint32_t c : {0u, 1u, 0xe3069283u, 0xffffffffu}) {
    EXPECT_EQ(crc32c::Unmask(crc32c::Mask(c)), c);
    EXPECT_NE(crc32c::Mask(c), c);
  }
}

// ---- Env files ----

TEST(EnvFilesTest, WritableFileAppendsAndRandomAccessReads) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  Env* env = Env::Default();
  std::string path = dir.File("f");
  {
    auto f = env->NewWritableFile(path);
    ASSERT_TRUE(f.ok()) << f.status();
    ASSERT_TRUE((*f)->Append("abc").ok());
    ASSERT_TRUE((*f)->Append("defgh").ok());
    ASSERT_TRUE((*f)->Sync().ok());
    ASSERT_TRUE((*f)->Close().ok());
  }
  {
    auto f = env->NewWritableFile(path, /*append=*/true);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Append("ij").ok());
  }
  EXPECT_EQ(*env->FileSize(path), 10u);
  auto r = env->NewRandomAccessFile(path);
  ASSERT_TRUE(r.ok());
  char buf[16];
  auto got = (*r)->Read(3, 4, buf);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, "defg");
  got = (*r)->Read(8, 16, buf);  // short read at the end
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, "ij");
  EXPECT_TRUE(absl::IsOutOfRange((*r)->Read(10, 1, buf).status()));
}

TEST(EnvFilesTest, DirectoriesRenameDelete) {
  TempDir dir;
  Env* env = Env::Default();
  std::string sub = JoinPath(dir.path(), "a/b/c");
  ASSERT_TRUE(env->CreateDirs(sub).ok());
  ASSERT_TRUE(env->CreateDirs(sub).ok());  // exists already: fine
  EXPECT_TRUE(env->IsDirectory(sub));
  ASSERT_TRUE(env->WriteFileAtomic(JoinPath(sub, "y"), "1").ok());
  ASSERT_TRUE(env->WriteFileAtomic(JoinPath(sub, "x"), "2").ok());
  auto kids = env->GetChildren(sub);
  ASSERT_TRUE(kids.ok());
  EXPECT_EQ(*kids, (std::vector<std::string>{"x", "y"}));
  ASSERT_TRUE(env->RenameFile(JoinPath(sub, "x"), JoinPath(sub, "y")).ok());
  EXPECT_EQ(*env->ReadFile(JoinPath(sub, "y")), "2");
  ASSERT_TRUE(env->DeleteFile(JoinPath(sub, "y")).ok());
  EXPECT_TRUE(absl::IsNotFound(env->DeleteFile(JoinPath(sub, "y"))));
  EXPECT_TRUE(absl::IsNotFound(env->GetChildren(JoinPath(dir.path(), "missing")).status()));
  EXPECT_TRUE(absl::IsNotFound(env->FileSize(JoinPath(dir.path(), "missing")).status()));
  // A file in the way of a directory.
  ASSERT_TRUE(env->WriteFileAtomic(JoinPath(dir.path(), "file"), "x").ok());
  EXPECT_FALSE(env->CreateDirs(JoinPath(dir.path(), "file/sub")).ok());
}

TEST(EnvFilesTest, PathHelpers) {
  EXPECT_EQ(JoinPath("a", "b"), "a/b");
  EXPECT_EQ(JoinPath("a/", "/b"), "a/b");
  EXPECT_EQ(JoinPath("", "b"), "b");
  EXPECT_EQ(DirName("a/b/c"), "a/b");
  EXPECT_EQ(DirName("c"), ".");
  EXPECT_EQ(DirName("/c"), "/");
  EXPECT_EQ(BaseName("a/b/c"), "c");
  EXPECT_EQ(BaseName("c"), "c");
  EXPECT_FALSE(Env::Default()->HostName().empty());
}

// ---- TFRecord ----

TEST(RecordIoTest, ReadsTheFileTensorFlowWrote) {
  auto f = Env::Default()->NewRandomAccessFile(TestData("rust_expected.tfrecord"));
  ASSERT_TRUE(f.ok()) << f.status();
  RecordReader reader(f->get());
  uint64_t offset = 0;
  std::string rec;
  ASSERT_TRUE(reader.ReadRecord(&offset, &rec).ok());
  EXPECT_EQ(rec, "The Quick Brown Fox");
  EXPECT_EQ(offset, 35u);
  EXPECT_TRUE(absl::IsOutOfRange(reader.ReadRecord(&offset, &rec)));
}

TEST(RecordIoTest, WritesTheSameBytesAsTensorFlow) {
  auto expected = Env::Default()->ReadFile(TestData("rust_expected.tfrecord"));
  ASSERT_TRUE(expected.ok());
  std::string data = "The Quick Brown Fox";
  EXPECT_EQ(EncodeRecordHeader(data) + data + EncodeRecordFooter(data), *expected);
}

TEST(RecordIoTest, ReadsTheTensorFlowEventFile) {
  auto f = Env::Default()->NewRandomAccessFile(TestData("lingvo_events.out.tfevents.test"));
  ASSERT_TRUE(f.ok());
  RecordReader reader(f->get());
  uint64_t offset = 0;
  std::string rec;
  int n = 0;
  Status s;
  while ((s = reader.ReadRecord(&offset, &rec)).ok()) ++n;
  EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
  EXPECT_EQ(n, 361);
}

class RecordIoFileTest : public ::testing::Test {
 protected:
  void Write(const std::vector<std::string>& records) {
    auto f = Env::Default()->NewWritableFile(path_);
    ASSERT_TRUE(f.ok());
    RecordWriter w(f->get());
    for (const auto& r : records) ASSERT_TRUE(w.WriteRecord(r).ok());
    ASSERT_TRUE((*f)->Close().ok());
  }
  // Reads until an error; returns the records and the final status.
  std::pair<std::vector<std::string>, Status> ReadAll(uint64_t max = uint64_t{1} << 31) {
    auto f = Env::Default()->NewRandomAccessFile(path_);
    EXPECT_TRUE(f.ok());
    RecordReader reader(f->get(), max);
    std::vector<std::string> out;
    uint64_t offset = 0;
    std::string rec;
    Status s;
    while ((s = reader.ReadRecord(&offset, &rec)).ok()) out.push_back(rec);
    return {out, s};
  }
  void Patch(size_t at, char c) {
    std::string bytes = *Env::Default()->ReadFile(path_);
    bytes[at] = c;
    ASSERT_TRUE(Env::Default()->WriteFileAtomic(path_, bytes).ok());
  }
  void Truncate(size_t n) {
    std::string bytes = *Env::Default()->ReadFile(path_);
    ASSERT_TRUE(Env::Default()->WriteFileAtomic(path_, bytes.substr(0, n)).ok());
  }
  TempDir dir_;
  std::string path_ = dir_.File("records");
};

TEST_F(RecordIoFileTest, RoundTripsIncludingEmptyAndBinaryRecords) {
  std::string binary("\0\x01\xff\n", 4);
  std::string big(100000, 'z');
  Write({"", "a", binary, big});
  auto [recs, s] = ReadAll();
  EXPECT_TRUE(absl::IsOutOfRange(s));
  EXPECT_EQ(recs, (std::vector<std::string>{"", "a", binary, big}));
}

TEST_F(RecordIoFileTest, FlippedDataByteIsDataLossNamingFileAndOffset) {
  Write({"first", "second"});
  Patch(12 + 5 + 4 + 12 + 2, 'X');  // inside "second"
  auto [recs, s] = ReadAll();
  EXPECT_EQ(recs.size(), 1u);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(s.message().find(path_), std::string::npos);
  EXPECT_NE(s.message().find("offset 21"), std::string::npos) << s;
}

TEST_F(RecordIoFileTest, FlippedLengthIsDataLoss) {
  Write({"first"});
  Patch(0, '\x7f');
  auto [recs, s] = ReadAll();
  EXPECT_TRUE(recs.empty());
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
}

TEST_F(RecordIoFileTest, TruncationAnywhereIsDataLoss) {
  Write({"first", "second"});
  size_t total = 2 * 16 + 5 + 6;
  for (size_t cut = 22; cut < total; ++cut) {  // inside the second record
    Write({"first", "second"});
    Truncate(cut);
    auto [recs, s] = ReadAll();
    EXPECT_EQ(recs.size(), 1u) << cut;
    EXPECT_TRUE(absl::IsDataLoss(s)) << cut << ": " << s;
  }
}

TEST_F(RecordIoFileTest, AbsurdLengthIsRejectedWithoutAllocating) {
  Write({std::string(100, 'a')});
  auto [recs, s] = ReadAll(/*max=*/50);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(s.message().find("limit"), std::string::npos);
}

}  // namespace
}  // namespace dflow
