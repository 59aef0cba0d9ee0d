// The Iris job (examples/iris.cc) in this process, and on a local cluster of 1 ps task and 2
// workers under `dflow launch`: the tutorial's accuracy (>= 0.933 on the 30 test flowers), the
// three predictions, and for a given seed the same printed result on every single-process run.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <regex>
#include <sstream>

#include "examples/iris.h"

#include "base/env.h"
#include "base/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_processes.h"
#include "tools/commands.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

// Runs the job in process; returns what it printed.
StatusOr<std::string> RunIrisJob(const std::vector<std::string>& args) {
  std::FILE* f = std::tmpfile();
  if (f == nullptr) return errors::Internal("tmpfile failed");
  Status s = examples::RunIris(args, "", f);
  std::rewind(f);
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
  std::fclose(f);
  if (!s.ok()) return errors::Annotate(s, text);
  return text;
}

// "Test set accuracy: 0.967" -> 0.967; -1 when missing.
double PrintedAccuracy(const std::string& text) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(R"(Test set accuracy: ([0-9.]+))"))) return -1;
  return std::stod(m[1]);
}

// The lines that do not depend on timing.
std::string WithoutRates(const std::string& text) {
  return std::regex_replace(text, std::regex(R"( \([0-9.]+ steps/sec\))"), "");
}

void ExpectPredictions(const std::string& text) {
  std::regex line(R"re(Prediction is "(\w+)" \(([0-9.]+)%\), expected "(\w+)")re");
  std::vector<std::string> got;
  for (std::sregex_iterator it(text.begin(), text.end(), line), end; it != end; ++it) {
    EXPECT_EQ((*it)[1], (*it)[3]) << text;
    EXPECT_GT(std::stod((*it)[2]), 50.0) << text;
    got.push_back((*it)[3]);
  }
  EXPECT_THAT(got, ::testing::ElementsAre("Setosa", "Versicolor", "Virginica")) << text;
}

TEST(IrisJobTest, SingleProcessReachesTheTutorialAccuracyAndRepeatsItself) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string data = "--data_dir=" DFLOW_SOURCE_DIR "/data/iris";
  auto first = RunIrisJob({data, "--model_dir=" + dir.File("a")});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_GE(PrintedAccuracy(*first), 0.933) << *first;
  EXPECT_THAT(*first, HasSubstr("step 1: loss = "));
  EXPECT_THAT(*first, HasSubstr("step 901: loss = "));
  ExpectPredictions(*first);
  // A second run of the same seed in a fresh model_dir prints the same losses and results.
  auto second = RunIrisJob({data, "--model_dir=" + dir.File("b")});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(WithoutRates(*first), WithoutRates(*second));
  // The accuracy printed is the model's: 28 or 29 of the 30 test flowers at least.
  const double acc = PrintedAccuracy(*first);
  EXPECT_NEAR(acc * 30, std::round(acc * 30), 0.02);
}

TEST(IrisJobTest, ResumesFromItsModelDir) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::vector<std::string> args = {"--data_dir=" DFLOW_SOURCE_DIR "/data/iris", "--model_dir=" + dir.path(),
                                         "--train_steps=300"};
  auto first = RunIrisJob(args);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(*first, HasSubstr("step 201: loss"));
  // max_steps 300 is reached already: nothing to train, the same model evaluated again.
  auto again = RunIrisJob(args);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_THAT(*again, ::testing::Not(HasSubstr("step 1: loss")));
  EXPECT_EQ(PrintedAccuracy(*first), PrintedAccuracy(*again));
  // 200 more steps start at global step 301.
  std::vector<std::string> more = args;
  more.back() = "--train_steps=500";
  auto resumed = RunIrisJob(more);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_THAT(*resumed, HasSubstr("step 301: loss"));
  EXPECT_THAT(*resumed, HasSubstr("step 401: loss"));
  EXPECT_THAT(*resumed, ::testing::Not(HasSubstr("step 201: loss")));
}

TEST(IrisJobTest, BadFlagsAndData) {
  auto bad_flag = RunIrisJob({"--no_such_flag=1"});
  ASSERT_FALSE(bad_flag.ok());
  EXPECT_THAT(bad_flag.status().message(), HasSubstr("unknown flag '--no_such_flag'"));
  auto bad_steps = RunIrisJob({"--train_steps=-3"});
  ASSERT_FALSE(bad_steps.ok());
  EXPECT_THAT(bad_steps.status().message(), HasSubstr("--train_steps must be a positive integer"));
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(dir.File("iris_training.csv"), "120,4,a,b,c\n1.0,2.0,x,4.0,1\n").ok());
  auto bad_csv = RunIrisJob({"--data_dir=" + dir.path()});
  ASSERT_FALSE(bad_csv.ok());
  EXPECT_THAT(bad_csv.status().message(), HasSubstr("iris_training.csv:2"));
  auto missing = RunIrisJob({"--data_dir=" + dir.File("none")});
  EXPECT_FALSE(missing.ok());
  auto bad_cluster = RunIrisJob({"--job_name=worker", "--worker_hosts=127.0.0.1:x"});
  ASSERT_FALSE(bad_cluster.ok());
}

TEST(IrisJobTest, OnePsAndTwoWorkersUnderLaunch) {
  std::ostringstream out, err;
  int code = tools::RunDflowCommand({"launch", "--ps", "1", "--workers", "2", "--timeout", "240", "--",
                                     BinDir() + "/iris", "--data_dir=" DFLOW_SOURCE_DIR "/data/iris"},
                                    out, err);
  const std::string text = out.str();
  ASSERT_EQ(code, 0) << text << err.str();
  // The chief evaluated and predicted; the other worker trained and ended.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"(\[worker 0\] Test set accuracy: ([0-9.]+))"))) << text;
  EXPECT_GE(std::stod(m[1]), 0.933) << text;
  ExpectPredictions(text);
  // Both workers trained and printed their progress (who takes global step 1 is a race).
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(\[worker 0\] step \d+: loss = [0-9.e-]+ \([0-9.]+ steps/sec\))")))
      << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(\[worker 1\] step \d+: loss = [0-9.e-]+ \([0-9.]+ steps/sec\))")))
      << text;
  EXPECT_THAT(err.str(), HasSubstr("dflow launch: worker 0 (the chief) exited 0: the job is complete"));
}

}  // namespace
}  // namespace dflow
