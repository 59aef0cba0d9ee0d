// EventFileReader on files TensorFlow wrote and on damaged files.
#include "train/event_file_reader.h"

#include <map>

#include "absl/base/casts.h"

#include "base/crc32c.h"
#include "base/record_io.h"
#include "base/temp_dir.h"
#include "gtest/gtest.h"
#include "proto/event.pb.h"

namespace dflow::summary {
namespace {

std::string TestData(absl::string_view name) { return JoinPath(DFLOW_SOURCE_DIR "/testdata/tf", name); }

TEST(EventFileReaderTest, ReadsTheEventFileTensorFlowWrote) {
  auto reader = EventFileReader::Open(TestData("lingvo_events.out.tfevents.test"));
  ASSERT_TRUE(reader.ok()) << reader.status();
  proto::Event e;
  ASSERT_TRUE((*reader)->ReadNext(&e).ok());
  EXPECT_EQ(e.file_version(), "brain.Event:2");
  EXPECT_GT(e.wall_time(), 1.4e9);  // written after 2014
  int n = 1;
  int summaries = 0;
  Status s;
  while ((s = (*reader)->ReadNext(&e)).ok()) {
    ++n;
    if (e.has_summary()) ++summaries;
  }
  EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
  EXPECT_EQ(n, 361);
  EXPECT_GT(summaries, 0);
  EXPECT_EQ((*reader)->offset(), *Env::Default()->FileSize(TestData("lingvo_events.out.tfevents.test")));
}

TEST(EventFileReaderTest, ScalarsOfTheTensorFlowFile) {
  auto scalars = ReadScalars(TestData("lingvo_events.out.tfevents.test"));
  ASSERT_TRUE(scalars.ok()) << scalars.status();
  // 360 summaries of 7 simple_values each (counted with protoc --decode_raw).
  EXPECT_EQ(scalars->size(), 360u * 7);
  std::map<std::string, std::map<int64_t, double>> by_tag;
  for (const ScalarEvent& e : *scalars) by_tag[e.tag][e.step] = e.value;
  EXPECT_EQ(by_tag.size(), 7u);
  ASSERT_TRUE(by_tag["log_perplexity/dev"].count(1500));
  EXPECT_EQ(by_tag["log_perplexity/dev"][1500], 0.0);
  // The float bits as stored in the file: 0x3de56599 and 0x4101e6c2.
  EXPECT_EQ(by_tag["bleu/dev"][1500], static_cast<double>(absl::bit_cast<float>(0x3de56599u)));
  EXPECT_NEAR(by_tag["bleu/dev"][1500], 0.1120102, 1e-6);
  EXPECT_EQ(by_tag["brevity_penalty/dev"][2000], 1.0);
  EXPECT_NEAR(by_tag["runtime/sentence/sec"][1500], 8.118837, 1e-5);
  EXPECT_TRUE(by_tag["bleu/dev"].count(185200));  // the last record's step
}

TEST(EventFileReaderTest, ARecordThatIsNotAnEventIsDataLoss) {
  // Valid TFRecord framing, but "The Quick Brown Fox" is not an Event.
  auto reader = EventFileReader::Open(TestData("rust_expected.tfrecord"));
  ASSERT_TRUE(reader.ok());
  proto::Event e;
  Status s = (*reader)->ReadNext(&e);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(s.message().find("rust_expected.tfrecord"), std::string::npos) << s;
  EXPECT_NE(s.message().find("offset 0"), std::string::npos) << s;
  EXPECT_EQ((*reader)->offset(), 0u);  // stays on the damaged record
}

TEST(EventFileReaderTest, MissingFileIsNotFound) {
  auto reader = EventFileReader::Open("/nonexistent/dir/events.out.tfevents.1.host");
  EXPECT_TRUE(absl::IsNotFound(reader.status())) << reader.status();
}

class DamagedEventFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    auto f = Env::Default()->NewWritableFile(path_);
    ASSERT_TRUE(f.ok());
    RecordWriter w(f->get());
    for (int i = 0; i < 3; ++i) {
      proto::Event e;
      e.set_step(i);
      auto* v = e.mutable_summary()->add_value();
      v->set_tag("x");
      v->set_simple_value(static_cast<float>(i) * 0.5f);
      std::string bytes = e.SerializeAsString();
      offsets_.push_back(size_);
      size_ += 16 + bytes.size();
      ASSERT_TRUE(w.WriteRecord(bytes).ok());
    }
    ASSERT_TRUE((*f)->Close().ok());
    bytes_ = *Env::Default()->ReadFile(path_);
  }
  void Rewrite(const std::string& bytes) { ASSERT_TRUE(Env::Default()->WriteFileAtomic(path_, bytes).ok()); }

  TempDir dir_;
  std::string path_ = dir_.File("events.out.tfevents.1.test");
  std::string bytes_;
  std::vector<uint64_t> offsets_;
  uint64_t size_ = 0;
};

TEST_F(DamagedEventFileTest, IntactFileReadsBack) {
  auto scalars = ReadScalars(path_);
  ASSERT_TRUE(scalars.ok()) << scalars.status();
  ASSERT_EQ(scalars->size(), 3u);
  EXPECT_EQ((*scalars)[2].tag, "x");
  EXPECT_EQ((*scalars)[2].step, 2);
  EXPECT_EQ((*scalars)[2].value, 1.0);
}

TEST_F(DamagedEventFileTest, FlippedByteIsDataLossNamingFileAndOffset) {
  std::string bad = bytes_;
  bad[offsets_[1] + 14] ^= 0x20;  // inside the second event's data
  Rewrite(bad);
  Status s = ReadScalars(path_).status();
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(s.message().find(path_), std::string::npos) << s;
  EXPECT_NE(s.message().find(absl::StrCat("offset ", offsets_[1])), std::string::npos) << s;
}

TEST_F(DamagedEventFileTest, TruncationAnywhereInALaterRecordIsDataLoss) {
  for (uint64_t cut = offsets_[2] + 1; cut < size_; ++cut) {
    Rewrite(bytes_.substr(0, cut));
    auto reader = EventFileReader::Open(path_);
    ASSERT_TRUE(reader.ok());
    proto::Event e;
    ASSERT_TRUE((*reader)->ReadNext(&e).ok());
    ASSERT_TRUE((*reader)->ReadNext(&e).ok());
    Status s = (*reader)->ReadNext(&e);
    EXPECT_TRUE(absl::IsDataLoss(s)) << cut << ": " << s;
    EXPECT_NE(s.message().find(absl::StrCat("offset ", offsets_[2])), std::string::npos) << s;
  }
}

TEST_F(DamagedEventFileTest, HugeClaimedLengthIsDataLossWithoutAllocating) {
  // A header with a valid checksum that claims 1 TiB of data.
  const uint64_t huge = uint64_t{1} << 40;
  std::string header(12, '\0');
  for (int i = 0; i < 8; ++i) header[i] = static_cast<char>((huge >> (8 * i)) & 0xff);
  const uint32_t crc = crc32c::Mask(crc32c::Value(header.data(), 8));
  for (int i = 0; i < 4; ++i) header[8 + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
  Rewrite(bytes_.substr(0, offsets_[1]) + header);
  auto reader = EventFileReader::Open(path_);
  ASSERT_TRUE(reader.ok());
  proto::Event e;
  ASSERT_TRUE((*reader)->ReadNext(&e).ok());
  Status s = (*reader)->ReadNext(&e);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(s.message().find("limit"), std::string::npos) << s;
}

TEST_F(DamagedEventFileTest, EverySingleByteChangeIsCaught) {
  // Whatever byte is changed, the reader returns the intact events before it and then DataLoss
  // (the checksums cover every byte), never garbage or a crash.
  for (size_t at = 0; at < bytes_.size(); ++at) {
    std::string bad = bytes_;
    bad[at] = static_cast<char>(bad[at] ^ (1 + at % 255));
    Rewrite(bad);
    auto reader = EventFileReader::Open(path_);
    ASSERT_TRUE(reader.ok());
    proto::Event e;
    Status s;
    int good = 0;
    while ((s = (*reader)->ReadNext(&e)).ok()) {
      EXPECT_EQ(e.step(), good) << at;
      ++good;
    }
    EXPECT_TRUE(absl::IsDataLoss(s)) << at << ": " << s;
    int damaged = 0;
    while (damaged + 1 < 3 && offsets_[damaged + 1] <= at) ++damaged;
    EXPECT_EQ(good, damaged) << at;
  }
}

}  // namespace
}  // namespace dflow::summary
