// FileWriter: file naming, the first event, round trips through EventFileReader, the flush
// thread, concurrency and write errors.
#include "train/file_writer.h"

#include <atomic>
#include <chrono>
#include <regex>
#include <thread>

#include "base/temp_dir.h"
#include "graph/graph.h"
#include "gtest/gtest.h"
#include "ops/register_all.h"
#include "proto/event.pb.h"
#include "proto/graph.pb.h"
#include "train/event_file_reader.h"

namespace dflow::summary {
namespace {

// Every event of `path` (failing the test on a read error).
std::vector<proto::Event> ReadAll(const std::string& path) {
  std::vector<proto::Event> out;
  auto reader = EventFileReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return out;
  proto::Event e;
  Status s;
  while ((s = (*reader)->ReadNext(&e)).ok()) out.push_back(e);
  EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
  return out;
}

TEST(FileWriterTest, NamesTheFileAsTensorFlowAndStartsWithTheFileVersion) {
  TempDir dir;
  const std::string logdir = JoinPath(dir.path(), "logs/run1");  // created with its parent
  const int64_t before = Env::Default()->NowMicros() / 1000000;
  FileWriter w(logdir, {.filename_suffix = ".v2"});
  ASSERT_TRUE(w.status().ok()) << w.status();
  const int64_t after = Env::Default()->NowMicros() / 1000000;
  EXPECT_EQ(DirName(w.path()), logdir);
  std::smatch m;
  const std::string base = BaseName(w.path());
  ASSERT_TRUE(std::regex_match(base, m, std::regex(R"(events\.out\.tfevents\.(\d{10})\.(.+)\.v2)"))) << base;
  const int64_t secs = std::stoll(m[1]);
  EXPECT_GE(secs, before);
  EXPECT_LE(secs, after);
  EXPECT_EQ(m[2], Env::Default()->HostName());

  // The first record is on disk before anything else is written.
  std::vector<proto::Event> events = ReadAll(w.path());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  EXPECT_GE(events[0].wall_time(), static_cast<double>(before));
  EXPECT_LE(events[0].wall_time(), static_cast<double>(after + 1));
  EXPECT_TRUE(w.Close().ok());
}

TEST(FileWriterTest, RoundTripsEveryKindOfEvent) {
  RegisterAllOps();
  TempDir dir;
  FileWriter w(dir.path());
  ASSERT_TRUE(w.status().ok()) << w.status();

  proto::Summary hist;
  proto::Summary::Value* hv = hist.add_value();
  hv->set_tag("weights");
  hv->mutable_histo()->set_num(3);
  hv->mutable_histo()->add_bucket_limit(1.5);
  hv->mutable_histo()->add_bucket(3);
  ASSERT_TRUE(w.AddSummary(hist.SerializeAsString(), 7).ok());
  ASSERT_TRUE(w.AddScalar("loss", 0.25, 8).ok());
  ASSERT_TRUE(w.AddSummary(Tensor(hist.SerializeAsString()), 9).ok());

  Graph g;
  NodeSpec spec;
  spec.name = "c";
  spec.op = "NoOp";
  ASSERT_TRUE(g.AddNode(spec).ok());
  ASSERT_TRUE(w.AddGraph(g, 3).ok());
  ASSERT_TRUE(w.AddSessionLog(SessionStatus::kCheckpoint, "saved", 10, "/tmp/model.ckpt-10").ok());
  proto::Event custom;
  custom.set_step(11);
  custom.set_wall_time(123.5);
  custom.mutable_log_message()->set_message("hello");
  ASSERT_TRUE(w.AddEvent(custom).ok());
  ASSERT_TRUE(w.Close().ok());

  std::vector<proto::Event> ev = ReadAll(w.path());
  ASSERT_EQ(ev.size(), 7u);
  EXPECT_EQ(ev[0].file_version(), kEventFileVersion);
  EXPECT_EQ(ev[1].step(), 7);
  EXPECT_EQ(ev[1].summary().value(0).tag(), "weights");
  EXPECT_EQ(ev[1].summary().value(0).histo().bucket(0), 3);
  EXPECT_GT(ev[1].wall_time(), 1.4e9);  // stamped by the writer
  EXPECT_EQ(ev[2].step(), 8);
  EXPECT_EQ(ev[2].summary().value(0).tag(), "loss");
  EXPECT_EQ(ev[2].summary().value(0).simple_value(), 0.25f);
  EXPECT_EQ(ev[3].step(), 9);
  EXPECT_EQ(ev[3].summary().SerializeAsString(), hist.SerializeAsString());
  EXPECT_EQ(ev[4].step(), 3);
  proto::GraphDef def;
  ASSERT_TRUE(def.ParseFromString(ev[4].graph_def()));
  ASSERT_EQ(def.node_size(), 1);
  EXPECT_EQ(def.node(0).name(), "c");
  EXPECT_EQ(def.node(0).op(), "NoOp");
  EXPECT_EQ(ev[5].session_log().status(), proto::SessionLog::CHECKPOINT);
  EXPECT_EQ(ev[5].session_log().checkpoint_path(), "/tmp/model.ckpt-10");
  EXPECT_EQ(ev[5].session_log().msg(), "saved");
  EXPECT_EQ(ev[6].wall_time(), 123.5);  // kept as given
  EXPECT_EQ(ev[6].log_message().message(), "hello");

  auto scalars = ReadScalars(w.path());
  ASSERT_TRUE(scalars.ok());
  ASSERT_EQ(scalars->size(), 1u);
  EXPECT_EQ((*scalars)[0].tag, "loss");
  EXPECT_EQ((*scalars)[0].step, 8);
  EXPECT_EQ((*scalars)[0].value, 0.25);
}

TEST(FileWriterTest, BadSummaryInputIsInvalidArgument) {
  TempDir dir;
  FileWriter w(dir.path());
  Status s = w.AddSummary(absl::string_view("\xff\xff\xff", 3), 1);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  s = w.AddSummary(Tensor(1.0f), 1);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("string scalar"), std::string::npos) << s;
  // A bad input is the caller's error, not the writer's: it goes on working.
  EXPECT_TRUE(w.AddScalar("ok", 1, 1).ok());
  EXPECT_TRUE(w.Close().ok());
  EXPECT_EQ(ReadAll(w.path()).size(), 2u);
}

TEST(FileWriterTest, FlushMakesEventsVisibleBeforeClose) {
  TempDir dir;
  FileWriter w(dir.path(), {.flush_secs = 3600});
  for (int i = 0; i < 25; ++i) ASSERT_TRUE(w.AddScalar("x", i, i).ok());
  ASSERT_TRUE(w.Flush().ok());
  auto scalars = ReadScalars(w.path());
  ASSERT_TRUE(scalars.ok()) << scalars.status();
  ASSERT_EQ(scalars->size(), 25u);
  for (int i = 0; i < 25; ++i) {
    EXPECT_EQ((*scalars)[i].step, i);
    EXPECT_EQ((*scalars)[i].value, i);
  }
  EXPECT_TRUE(w.Close().ok());
}

TEST(FileWriterTest, BackgroundThreadFlushesEveryFlushSecs) {
  TempDir dir;
  FileWriter w(dir.path(), {.flush_secs = 0.02});
  ASSERT_TRUE(w.AddScalar("x", 1, 1).ok());
  // Nobody calls Flush: the writer's own timer must get the event to the file.
  size_t seen = 0;
  for (int i = 0; i < 1000 && seen < 1; ++i) {  // at most ~10 s
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto scalars = ReadScalars(w.path());
    if (scalars.ok()) seen = scalars->size();
  }
  EXPECT_EQ(seen, 1u);
  EXPECT_TRUE(w.Close().ok());
}

TEST(FileWriterTest, ManyThreadsThroughASmallQueue) {
  TempDir dir;
  FileWriter w(dir.path(), {.max_queue = 2});
  constexpr int kThreads = 4, kPerThread = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&w, t] {
      for (int i = 0; i < kPerThread; ++i) EXPECT_TRUE(w.AddScalar(absl::StrCat("t", t), i, i).ok());
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_TRUE(w.Close().ok());
  auto scalars = ReadScalars(w.path());
  ASSERT_TRUE(scalars.ok());
  ASSERT_EQ(scalars->size(), static_cast<size_t>(kThreads * kPerThread));
  // Each thread's events keep their order.
  std::vector<int64_t> next(kThreads, 0);
  for (const ScalarEvent& e : *scalars) {
    int t = e.tag[1] - '0';
    EXPECT_EQ(e.step, next[t]++);
  }
}

TEST(FileWriterTest, TwoWritersInOneSecondGetTwoFiles) {
  TempDir dir;
  FileWriter a(dir.path());
  FileWriter b(dir.path());
  ASSERT_TRUE(a.status().ok() && b.status().ok());
  EXPECT_NE(a.path(), b.path());
  ASSERT_TRUE(a.AddScalar("a", 1, 1).ok());
  ASSERT_TRUE(b.AddScalar("b", 2, 2).ok());
  ASSERT_TRUE(a.Close().ok());
  ASSERT_TRUE(b.Close().ok());
  EXPECT_EQ((*ReadScalars(a.path()))[0].tag, "a");
  EXPECT_EQ((*ReadScalars(b.path()))[0].tag, "b");
}

TEST(FileWriterTest, CallsAfterCloseAreFailedPrecondition) {
  TempDir dir;
  FileWriter w(dir.path());
  ASSERT_TRUE(w.Close().ok());
  EXPECT_TRUE(w.Close().ok());  // idempotent
  Status s = w.AddScalar("x", 1, 1);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_NE(s.message().find("closed"), std::string::npos) << s;
  EXPECT_TRUE(absl::IsFailedPrecondition(w.Flush()));
}

TEST(FileWriterTest, UnusableLogdirIsReportedByEveryCall) {
  TempDir dir;
  const std::string file = dir.File("not_a_dir");
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(file, "x").ok());
  FileWriter w(file);
  EXPECT_FALSE(w.status().ok());
  EXPECT_NE(w.status().message().find(file), std::string::npos) << w.status();
  EXPECT_FALSE(w.AddScalar("x", 1, 1).ok());
  EXPECT_FALSE(w.Flush().ok());
  EXPECT_FALSE(w.Close().ok());

  FileWriter empty("");
  EXPECT_TRUE(absl::IsInvalidArgument(empty.status())) << empty.status();
}

// An Env whose files fail every Append once `fail` is set.
class FailingEnv : public Env {
 public:
  std::atomic<bool> fail{false};
  StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path, bool append) const override {
    ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> f, Env::NewWritableFile(path, append));
    return std::unique_ptr<WritableFile>(new File(std::move(f), &fail));
  }

 private:
  class File : public WritableFile {
   public:
    File(std::unique_ptr<WritableFile> f, const std::atomic<bool>* fail) : f_(std::move(f)), fail_(fail) {}
    Status Append(absl::string_view data) override {
      if (*fail_) return absl::ResourceExhaustedError("No space left on device");
      return f_->Append(data);
    }
    Status Flush() override { return f_->Flush(); }
    Status Sync() override { return f_->Sync(); }
    Status Close() override { return f_->Close(); }
    const std::string& path() const override { return f_->path(); }

   private:
    std::unique_ptr<WritableFile> f_;
    const std::atomic<bool>* fail_;
  };
};

TEST(FileWriterTest, AWriteErrorIsReportedByTheNextCallAndByClose) {
  TempDir dir;
  FailingEnv env;
  FileWriter w(dir.path(), {.env = &env});
  ASSERT_TRUE(w.AddScalar("before", 1, 1).ok());
  ASSERT_TRUE(w.Flush().ok());
  env.fail = true;
  // The event is accepted into the queue; its write fails on the writer thread.
  ASSERT_TRUE(w.AddScalar("lost", 2, 2).ok());
  Status s = w.Flush();
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_NE(s.message().find(w.path()), std::string::npos) << s;
  // Sticky: later calls and Close report the same error.
  EXPECT_EQ(w.AddScalar("after", 3, 3), s);
  EXPECT_EQ(w.status(), s);
  EXPECT_EQ(w.Close(), s);
  EXPECT_EQ(w.Close(), s);
  auto scalars = ReadScalars(w.path());
  ASSERT_TRUE(scalars.ok()) << scalars.status();
  ASSERT_EQ(scalars->size(), 1u);  // what was written before the error is intact
  EXPECT_EQ((*scalars)[0].tag, "before");
}

TEST(FileWriterTest, AWriteErrorWithoutFlushIsReportedByClose) {
  TempDir dir;
  FailingEnv env;
  Status close;
  {
    FileWriter w(dir.path(), {.env = &env});
    env.fail = true;
    for (int i = 0; i < 5; ++i) {
      Status s = w.AddScalar("x", i, i);  // OK until the thread has hit the error
      if (!s.ok()) EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
    }
    close = w.Close();
  }
  EXPECT_TRUE(absl::IsResourceExhausted(close)) << close;
}

TEST(FileWriterTest, DestructorWithQueuedEventsWritesThem) {
  TempDir dir;
  std::string path;
  {
    FileWriter w(dir.path(), {.flush_secs = 3600});
    path = w.path();
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(w.AddScalar("x", i, i).ok());
  }
  auto scalars = ReadScalars(path);
  ASSERT_TRUE(scalars.ok());
  EXPECT_EQ(scalars->size(), 10u);
}

}  // namespace
}  // namespace dflow::summary
