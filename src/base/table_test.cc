// The LevelDB table format: round trips, TensorFlow's file, and hostile bytes.
#include <fstream>
#include <random>
#include <string>

#include "base/crc32c.h"
#include "base/env.h"
#include "base/table.h"
#include "base/temp_dir.h"
#include "gtest/gtest.h"

namespace dflow::table {
namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

std::string TestData(absl::string_view name) { return JoinPath(DFLOW_SOURCE_DIR "/testdata/tf", name); }

// A RandomAccessFile over bytes in memory, for mutation tests without disk traffic.
class StringFile : public RandomAccessFile {
 public:
  explicit StringFile(std::string data) : data_(std::move(data)) {}
  StatusOr<absl::string_view> Read(uint64_t offset, size_t n, char* scratch) const override {
    if (offset > data_.size()) return errors::OutOfRange("read past the end");
    n = std::min<uint64_t>(n, data_.size() - offset);
    std::memcpy(scratch, data_.data() + offset, n);
    return absl::string_view(scratch, n);
  }
  const std::string& path() const override { return path_; }

 private:
  std::string data_;
  std::string path_ = "mem.index";
};

// A WritableFile into a string.
class StringSink : public WritableFile {
 public:
  Status Append(absl::string_view d) override {
    data.append(d.data(), d.size());
    return absl::OkStatus();
  }
  Status Flush() override { return absl::OkStatus(); }
  Status Sync() override { return absl::OkStatus(); }
  Status Close() override { return absl::OkStatus(); }
  const std::string& path() const override { return path_; }
  std::string data;

 private:
  std::string path_ = "mem.index";
};

std::string Build(const Entries& entries, Options o = Options()) {
  StringSink sink;
  TableBuilder b(&sink, o);
  for (const auto& [k, v] : entries) EXPECT_TRUE(b.Add(k, v).ok()) << k;
  EXPECT_TRUE(b.Finish().ok());
  EXPECT_EQ(b.FileSize(), sink.data.size());
  return sink.data;
}

StatusOr<Entries> Read(const std::string& bytes) {
  StringFile f(bytes);
  return ReadTable(f, bytes.size());
}

Entries ManyEntries(int n) {
  Entries e;
  for (int i = 0; i < n; ++i) {
    char key[32];
    std::snprintf(key, sizeof(key), "layer_%03d/kernel/%d", i / 7, i);
    e.emplace_back(key, std::string(static_cast<size_t>(i % 13), static_cast<char>('a' + i % 26)));
  }
  std::sort(e.begin(), e.end());
  return e;
}

TEST(VarintTest, RoundTripsAndRejectsOverlongOrCutOff) {
  for (uint64_t v : {0ull, 1ull, 127ull, 128ull, 300ull, 0xffffffffull, 0xffffffffffffffffull}) {
    std::string s;
    PutVarint64(&s, v);
    absl::string_view in = s;
    uint64_t r = 0;
    ASSERT_TRUE(GetVarint64(&in, &r));
    EXPECT_EQ(r, v);
    EXPECT_TRUE(in.empty());
    absl::string_view cut(s.data(), s.size() - 1);
    EXPECT_FALSE(GetVarint64(&cut, &r)) << v;
  }
  absl::string_view eleven("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
  uint64_t r = 0;
  EXPECT_FALSE(GetVarint64(&eleven, &r));
  absl::string_view too_big32("\xff\xff\xff\xff\x1f", 5);  // 2^35 - 1 does not fit 32 bits
  uint32_t r32 = 0;
  EXPECT_FALSE(GetVarint32(&too_big32, &r32));
}

TEST(TableTest, RoundTripsOneAndManyBlocks) {
  Entries e = ManyEntries(500);
  for (size_t block : {size_t{64}, size_t{1000}, size_t{1} << 20}) {
    Options o;
    o.block_size = block;
    auto r = Read(Build(e, o));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(*r, e) << block;
  }
  auto empty = Read(Build({}));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->empty());
}

TEST(TableTest, KeysMustIncrease) {
  StringSink sink;
  TableBuilder b(&sink);
  ASSERT_TRUE(b.Add("b", "1").ok());
  EXPECT_EQ(b.Add("a", "2").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(b.Add("b", "2").code(), absl::StatusCode::kInvalidArgument);
}

// The index of a checkpoint written by TensorFlow 1.11 (see testdata/tf/README.md).
TEST(TableTest, ReadsTensorFlowsIndexAndWritesTheSameBytes) {
  auto bytes = Env::Default()->ReadFile(TestData("checkpoint_v2_regression/model.index"));
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto r = Read(*bytes);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].first, "");
  EXPECT_EQ((*r)[1].first, "W");
  EXPECT_EQ((*r)[2].first, "b");
  EXPECT_EQ((*r)[0].second, std::string("\x08\x01\x1a\x02\x08\x01", 6));  // num_shards 1, producer 1
  // Same entries, same options: byte for byte the file TensorFlow wrote (index key "c" after "b").
  EXPECT_EQ(Build(*r), *bytes);
}

TEST(SnappyTest, DecodesLiteralsAndOverlappingCopies) {
  // 10 bytes: literal "abc", then a copy of 7 bytes from 3 back (overlapping what it writes).
  auto r = SnappyUncompress(std::string("\x0a\x08"
                                        "abc"
                                        "\x0d\x03",
                                        7));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "abcabcabca");
  // Two-byte offset copy: literal "xy", copy 4 bytes from 2 back.
  r = SnappyUncompress(std::string("\x06\x04xy\x0e\x02\x00", 7));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "xyxyxy");
  EXPECT_FALSE(SnappyUncompress(std::string("\x0a\x08"
                                            "abc"
                                            "\x0d\x04",
                                            7))
                   .ok());  // offset past start
  EXPECT_FALSE(SnappyUncompress(std::string("\x09\x08"
                                            "abc"
                                            "\x0d\x03",
                                            7))
                   .ok());                                                      // longer than declared
  EXPECT_FALSE(SnappyUncompress(std::string("\xff\xff\xff\xff\x0f", 5)).ok());  // impossible length
  EXPECT_FALSE(SnappyUncompress(std::string("\x05\x10"
                                            "ab",
                                            4))
                   .ok());  // literal cut off
}

// Every truncation and every single-byte change of a table only ever gives an error or a
// (possibly different) valid table: no crash, no out-of-bounds read, no huge allocation.
TEST(TableTest, SurvivesEveryTruncationAndByteMutation) {
  Options o;
  o.block_size = 200;
  const std::string good = Build(ManyEntries(40), o);
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(Read(good.substr(0, n)).ok()) << n;
  }
  int failures = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    for (int x : {0x01, 0x80, 0xff}) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ x);
      auto r = Read(bad);
      if (!r.ok()) {
        ++failures;
        EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << i << ": " << r.status();
      }
    }
  }
  EXPECT_GT(failures, static_cast<int>(good.size()));  // the checksums catch (nearly) every change
}

// The checksums stop most damage before parsing; this recomputes them after each mutation so
// that the block and entry parsers themselves see hostile bytes.
TEST(TableTest, BlockParserSurvivesMutationsBehindValidChecksums) {
  Options o;
  o.block_size = 1 << 20;  // one data block at offset 0
  const std::string good = Build(ManyEntries(30), o);
  // The footer's index handle tells where the data block ends: its index entry's handle.
  auto entries = Read(good);
  ASSERT_TRUE(entries.ok());
  // The data block is everything before the first trailer; find its size from the metaindex
  // handle (the metaindex block follows the data block's trailer).
  absl::string_view footer(good.data() + good.size() - kFooterSize, kFooterSize);
  uint64_t meta_offset = 0;
  ASSERT_TRUE(GetVarint64(&footer, &meta_offset));
  const size_t block_size = meta_offset - kBlockTrailerSize;
  std::mt19937 rng(7);
  for (int iter = 0; iter < 3000; ++iter) {
    std::string bad = good;
    const int edits = 1 + iter % 4;
    for (int k = 0; k < edits; ++k) {
      bad[rng() % block_size] = static_cast<char>(rng() % 256);
    }
    const uint32_t crc = crc32c::Extend(crc32c::Value(bad.data(), block_size), "\0", 1);
    std::string fixed;
    PutFixed32(&fixed, crc32c::Mask(crc));
    bad.replace(block_size + 1, 4, fixed);
    auto r = Read(bad);
    if (!r.ok()) EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << r.status();
  }
}

}  // namespace
}  // namespace dflow::table
