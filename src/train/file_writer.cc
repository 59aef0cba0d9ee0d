#include "train/file_writer.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <set>
#include <thread>

#include "absl/strings/str_format.h"
#include "base/record_io.h"
#include "graph/graph_def.h"
#include "proto/event.pb.h"
#include "proto/graph.pb.h"

namespace dflow::summary {

const char kEventFileVersion[] = "brain.Event:2";

namespace {

// Event file paths open in this process: two writers created in the same second in one logdir
// would otherwise truncate each other's file.
std::mutex& PathsMu() {
  static std::mutex mu;
  return mu;
}
std::set<std::string>& PathsInUse() {
  static std::set<std::string> paths;
  return paths;
}

}  // namespace

class FileWriter::Impl {
 public:
  Impl(const std::string& logdir, const FileWriterOptions& options)
      : env_(options.env != nullptr ? options.env : Env::Default()),
        logdir_(logdir),
        max_queue_(options.max_queue > 0 ? static_cast<size_t>(options.max_queue) : 1),
        flush_interval_(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(options.flush_secs > 0 ? options.flush_secs : 120))) {
    status_ = Open(options.filename_suffix);
    if (status_.ok()) thread_ = std::thread([this] { WriterLoop(); });
  }

  ~Impl() { Close().IgnoreError(); }

  double Now() const { return static_cast<double>(env_->NowMicros()) / 1e6; }

  Status Enqueue(proto::Event event) {
    if (event.wall_time() == 0) event.set_wall_time(Now());
    std::string bytes;
    if (!event.SerializeToString(&bytes)) return errors::Internal("FileWriter: cannot serialize an event");
    std::unique_lock<std::mutex> l(mu_);
    // The writer thread empties the queue at the pace of the file system, and drops it on an
    // error, so this wait ends without a deadline of its own.
    space_cv_.wait(l, [&] { return stopping_ || !status_.ok() || queue_.size() < max_queue_; });
    if (stopping_) return ClosedError();
    if (!status_.ok()) return status_;
    queue_.push_back(std::move(bytes));
    ++enqueued_;
    work_cv_.notify_one();
    return absl::OkStatus();
  }

  Status Flush() {
    std::unique_lock<std::mutex> l(mu_);
    if (stopping_) return ClosedError();
    if (!status_.ok()) return status_;
    const uint64_t target = enqueued_;
    flush_target_ = std::max(flush_target_, target);
    work_cv_.notify_one();
    done_cv_.wait(l, [&] { return flushed_ >= target || !status_.ok() || thread_exited_; });
    return status_;
  }

  Status Close() {
    std::lock_guard<std::mutex> close_lock(close_mu_);
    if (closed_) return close_status_;
    {
      std::lock_guard<std::mutex> l(mu_);
      stopping_ = true;
      work_cv_.notify_all();
      space_cv_.notify_all();
      done_cv_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
    Status s = status();
    if (file_ != nullptr) {
      if (s.ok()) s = Annotated(file_->Sync(), "sync");
      Status c = Annotated(file_->Close(), "close");
      if (s.ok()) s = c;
      file_.reset();
      std::lock_guard<std::mutex> l(PathsMu());
      PathsInUse().erase(path_);
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      if (status_.ok()) status_ = s;
    }
    close_status_ = s;
    closed_ = true;
    return s;
  }

  Status status() const {
    std::lock_guard<std::mutex> l(mu_);
    return status_;
  }

  const std::string& path() const { return path_; }
  const std::string& logdir() const { return logdir_; }

 private:
  Status ClosedError() const {
    return errors::FailedPrecondition("FileWriter for ", path_.empty() ? logdir_ : path_, " is closed");
  }

  Status Annotated(const Status& s, absl::string_view what) const {
    if (s.ok()) return s;
    return errors::Annotate(s, absl::StrCat("FileWriter: ", what, " of event file ", path_, ": "));
  }

  Status Open(const std::string& suffix) {
    if (logdir_.empty()) return errors::InvalidArgument("FileWriter: the logdir is empty");
    Status s = env_->CreateDirs(logdir_);
    if (!s.ok()) return errors::Annotate(s, absl::StrCat("FileWriter: cannot create logdir ", logdir_, ": "));
    const int64_t seconds = env_->NowMicros() / 1000000;
    const std::string base = JoinPath(logdir_, absl::StrFormat("events.out.tfevents.%010d.%s%s", seconds,
                                                               env_->HostName(), suffix));
    {
      std::lock_guard<std::mutex> l(PathsMu());
      std::string candidate = base;
      for (int n = 1; PathsInUse().count(candidate) > 0 || env_->FileExists(candidate); ++n)
        candidate = absl::StrCat(base, ".", n);
      path_ = candidate;
      PathsInUse().insert(path_);
    }
    auto file = env_->NewWritableFile(path_);
    if (!file.ok()) {
      std::lock_guard<std::mutex> l(PathsMu());
      PathsInUse().erase(path_);
      Status err = errors::Annotate(file.status(), absl::StrCat("FileWriter: cannot create event file ", path_, ": "));
      path_.clear();
      return err;
    }
    file_ = std::move(*file);
    proto::Event first;
    first.set_wall_time(Now());
    first.set_file_version(kEventFileVersion);
    RecordWriter writer(file_.get());
    RETURN_IF_ERROR(Annotated(writer.WriteRecord(first.SerializeAsString()), "write"));
    return Annotated(writer.Flush(), "flush");
  }

  // Takes whatever is queued, writes it without holding the lock, and flushes on request, every
  // flush_interval_, and before exiting.
  void WriterLoop() {
    RecordWriter writer(file_.get());
    auto next_flush = std::chrono::steady_clock::now() + flush_interval_;
    std::unique_lock<std::mutex> l(mu_);
    while (true) {
      work_cv_.wait_until(l, next_flush, [&] { return stopping_ || !queue_.empty() || flush_target_ > flushed_; });
      std::deque<std::string> batch;
      batch.swap(queue_);
      space_cv_.notify_all();
      const uint64_t batch_end = enqueued_;
      const bool ok = status_.ok();
      const bool flush_now = stopping_ || flush_target_ > flushed_ || std::chrono::steady_clock::now() >= next_flush;
      l.unlock();
      Status s;
      if (ok) {
        for (const std::string& record : batch) {
          s = Annotated(writer.WriteRecord(record), "write");
          if (!s.ok()) break;
        }
        if (s.ok() && flush_now) s = Annotated(writer.Flush(), "flush");
      }
      l.lock();
      if (!s.ok() && status_.ok()) {
        status_ = s;
        queue_.clear();  // nothing after a failed write can be trusted to land in order
        space_cv_.notify_all();
      }
      written_ = batch_end;
      if (flush_now) {
        flushed_ = batch_end;
        next_flush = std::chrono::steady_clock::now() + flush_interval_;
      }
      done_cv_.notify_all();
      if (stopping_ && queue_.empty()) break;
    }
    thread_exited_ = true;
    done_cv_.notify_all();
  }

  Env* const env_;
  const std::string logdir_;
  const size_t max_queue_;
  const std::chrono::steady_clock::duration flush_interval_;
  std::string path_;
  std::unique_ptr<WritableFile> file_;  // used by the writer thread while it runs
  std::thread thread_;

  mutable std::mutex mu_;
  std::condition_variable work_cv_;   // the writer thread waits for events, flushes, stop
  std::condition_variable space_cv_;  // Enqueue waits for room in the queue
  std::condition_variable done_cv_;   // Flush waits for the writer thread
  std::deque<std::string> queue_;     // serialized events
  uint64_t enqueued_ = 0;             // events accepted so far
  uint64_t written_ = 0;              // events written (or dropped after an error)
  uint64_t flushed_ = 0;              // events handed to the OS
  uint64_t flush_target_ = 0;         // Flush wants flushed_ to reach this
  bool stopping_ = false;
  bool thread_exited_ = false;
  Status status_;  // the first error; sticky

  std::mutex close_mu_;
  bool closed_ = false;
  Status close_status_;
};

FileWriter::FileWriter(const std::string& logdir, const FileWriterOptions& options)
    : impl_(std::make_unique<Impl>(logdir, options)) {}

FileWriter::~FileWriter() = default;

Status FileWriter::AddSummary(absl::string_view serialized_summary, int64_t global_step) {
  proto::Event event;
  if (serialized_summary.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !event.mutable_summary()->ParseFromArray(serialized_summary.data(),
                                               static_cast<int>(serialized_summary.size()))) {
    return errors::InvalidArgument("FileWriter::AddSummary: ", serialized_summary.size(),
                                   " bytes that are not a serialized Summary");
  }
  event.set_step(global_step);
  return impl_->Enqueue(std::move(event));
}

Status FileWriter::AddSummary(const Tensor& summary, int64_t global_step) {
  if (summary.dtype() != DT_STRING || summary.NumElements() != 1) {
    return errors::InvalidArgument("FileWriter::AddSummary: expected a string scalar (a summary op's output), got ",
                                   DTypeString(summary.dtype()), " of shape ", summary.shape().DebugString());
  }
  return AddSummary(summary.flat<std::string>()[0], global_step);
}

Status FileWriter::AddScalar(const std::string& tag, double value, int64_t global_step) {
  proto::Event event;
  event.set_step(global_step);
  proto::Summary::Value* v = event.mutable_summary()->add_value();
  v->set_tag(tag);
  v->set_simple_value(static_cast<float>(value));
  return impl_->Enqueue(std::move(event));
}

Status FileWriter::AddEvent(const proto::Event& event) { return impl_->Enqueue(event); }

Status FileWriter::AddGraph(const Graph& graph, int64_t global_step) {
  proto::GraphDef def;
  ExportGraphDef(graph, &def);
  return AddGraphDef(def, global_step);
}

Status FileWriter::AddGraphDef(const proto::GraphDef& graph_def, int64_t global_step) {
  proto::Event event;
  event.set_step(global_step);
  if (!graph_def.SerializeToString(event.mutable_graph_def())) {
    return errors::InvalidArgument("FileWriter::AddGraphDef: the GraphDef cannot be serialized (over 2 GiB?)");
  }
  return impl_->Enqueue(std::move(event));
}

Status FileWriter::AddSessionLog(SessionStatus status, const std::string& msg, int64_t global_step,
                                 const std::string& checkpoint_path) {
  proto::Event event;
  event.set_step(global_step);
  proto::SessionLog* log = event.mutable_session_log();
  log->set_status(static_cast<proto::SessionLog::SessionStatus>(status));
  log->set_msg(msg);
  log->set_checkpoint_path(checkpoint_path);
  return impl_->Enqueue(std::move(event));
}

Status FileWriter::Flush() { return impl_->Flush(); }
Status FileWriter::Close() { return impl_->Close(); }
Status FileWriter::status() const { return impl_->status(); }
const std::string& FileWriter::path() const { return impl_->path(); }
const std::string& FileWriter::logdir() const { return impl_->logdir(); }

}  // namespace dflow::summary
