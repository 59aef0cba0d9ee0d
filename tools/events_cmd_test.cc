// `dflow events` on TensorFlow's event file, on files FileWriter wrote, and on damaged files.
#include <sstream>

#include "base/env.h"
#include "base/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/event.pb.h"
#include "tools/cli_test_util.h"
#include "train/file_writer.h"

namespace dflow::tools {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

TEST(EventsCommandTest, PrintsTheScalarsOfTensorFlowsEventFile) {
  Result r = Cmd({"events", Data("lingvo_events.out.tfevents.test")});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 360u * 7);  // 360 summaries of 7 simple_values
  // The first summary (record 1, step 1500); bits 0x3de56599, 0x3f800000, 0x4101e6c2.
  EXPECT_EQ(lines[0], "bleu/dev 1500 0.11201019");
  EXPECT_EQ(lines[1], "brevity_penalty/dev 1500 1");
  EXPECT_EQ(lines[4], "log_perplexity/dev 1500 0");
  EXPECT_EQ(lines[6], "runtime/sentence/sec 1500 8.118837");
  EXPECT_THAT(lines.back(), StartsWith("runtime/sentence/sec 185200 "));
}

TEST(EventsCommandTest, RoundTripsWhatFileWriterWrote) {
  TempDir dir;
  summary::FileWriter w(dir.path());
  ASSERT_TRUE(w.AddScalar("loss", 0.25, 3).ok());
  proto::Event e;
  e.set_step(4);
  proto::Summary::Value* v = e.mutable_summary()->add_value();
  v->set_tag("acc");
  v->mutable_tensor()->set_dtype(proto::DT_DOUBLE);
  v->mutable_tensor()->add_double_val(0.1);  // printed as a double, not a float
  v = e.mutable_summary()->add_value();
  v->set_tag("count");
  v->mutable_tensor()->set_dtype(proto::DT_INT64);
  v->mutable_tensor()->add_int64_val(7);
  v = e.mutable_summary()->add_value();
  v->set_tag("not_a_scalar");
  v->mutable_histo()->set_num(1);
  ASSERT_TRUE(w.AddEvent(e).ok());
  ASSERT_TRUE(w.AddSessionLog(summary::SessionStatus::kStart, "", 5).ok());
  ASSERT_TRUE(w.Close().ok());
  Result r = Cmd({"events", w.path()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "loss 3 0.25\nacc 4 0.1\ncount 4 7\n");
}

TEST(EventsCommandTest, DamagedFilePrintsWhatPrecedesAndFails) {
  TempDir dir;
  std::string path;
  {
    summary::FileWriter w(dir.path());
    ASSERT_TRUE(w.AddScalar("a", 1, 1).ok());
    ASSERT_TRUE(w.AddScalar("b", 2, 2).ok());
    ASSERT_TRUE(w.Close().ok());
    path = w.path();
  }
  std::string bytes = *Env::Default()->ReadFile(path);
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(path, bytes.substr(0, bytes.size() - 3)).ok());
  Result r = Cmd({"events", path});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "a 1 1\n");
  EXPECT_THAT(r.err, HasSubstr("Truncated record"));
  EXPECT_THAT(r.err, HasSubstr(path));
  EXPECT_THAT(r.err, HasSubstr("offset"));
}

TEST(EventsCommandTest, BadArguments) {
  EXPECT_EQ(Cmd({"events"}).code, 2);
  EXPECT_EQ(Cmd({"events", "a", "b"}).code, 2);
  Result r = Cmd({"events", "/nonexistent/events.out.tfevents.1.x"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/events.out.tfevents.1.x"));
}

}  // namespace
}  // namespace dflow::tools
