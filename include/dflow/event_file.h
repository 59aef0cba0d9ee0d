// Event files: summary::FileWriter writes TensorBoard event files (TensorFlow's
// tf.summary.FileWriter); summary::EventFileReader and ReadScalars read them (TensorFlow's
// tf.compat.v1.train.summary_iterator).
//
//   summary::FileWriter writer("/tmp/logdir");              // creates the directory and the file
//   Tensor s;  session.Run({}, {merged}, &out);              // a serialized Summary (string scalar)
//   DFLOW_RETURN_IF_ERROR(writer.AddSummary(out[0], step));
//   DFLOW_RETURN_IF_ERROR(writer.AddScalar("loss", 0.25, step));  // without any op
//   DFLOW_RETURN_IF_ERROR(writer.Close());  // drains, syncs; reports any error
//
// The file is logdir/events.out.tfevents.<seconds>.<hostname><filename_suffix>, <seconds> the
// 10-digit wall-clock time at creation, as TensorFlow names it. When another writer of this
// process already uses that name (two writers in one second), ".1", ".2", ... is appended.
// Records use TFRecord framing (length, masked CRC32C of the length, data, masked CRC32C of
// the data); each record is an Event (proto/event.proto). The first
// record, written and flushed by the constructor, is an Event with file_version
// "brain.Event:2".
//
// Events are queued (at most max_queue; a full queue makes Add* wait until the writer thread
// has written one) and written by a background thread, which hands the file to the OS every
// flush_secs and when Flush is called. Add* stamp wall_time (seconds since the epoch, from the
// Env's clock) on events that have none.
//
// Errors are values and are never lost: failing to create the directory or the file makes
// every call return that error (see status()); a failed write or flush is sticky — it is
// returned by the next call (Add*, Flush) and by Close, every later call returns it, and events
// queued after it are dropped. Error messages name the file. After Close, Add* and Flush return
// FailedPrecondition. Close and the destructor never wait for anything but the writing of
// what is already queued (a bounded amount of work); they do not hang on a broken file.
//
// Thread-safety: every method may be called from any thread concurrently. The writer owns its
// file and thread; the Env (when given) must outlive it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "dflow/status.h"
#include "dflow/tensor.h"

namespace dflow {
// Defined inside dflow: the file system (tests pass one that fails writes) and the graph that
// Scope::graph() returns.
class Env;
class Graph;
class RandomAccessFile;
// The generated message classes (proto/event.proto, proto/graph.proto): dflow/protos.h.
namespace proto {
class Event;
class GraphDef;
}  // namespace proto
}  // namespace dflow

namespace dflow::summary {

// "brain.Event:2": the file_version of the first event of every event file.
extern const char kEventFileVersion[];

struct FileWriterOptions {
  // Events that may wait to be written before Add* blocks (>= 1; 0 or less means 1).
  int max_queue = 10;
  // How often the writer thread flushes the file to the OS (> 0; TensorFlow's default).
  double flush_secs = 120;
  // Appended to the file name: "events.out.tfevents.<seconds>.<host><suffix>".
  std::string filename_suffix;
  // Files and clock; nullptr means the default (the local file system and clock).
  Env* env = nullptr;
};

// SessionLog.SessionStatus (proto/event.proto).
enum class SessionStatus { kStart = 1, kStop = 2, kCheckpoint = 3 };

class FileWriter {
 public:
  // Creates `logdir` (and parents) when missing, then the event file with its file_version
  // record. Failure (an empty logdir, a logdir that is a file, a write error) is not fatal:
  // status() and every later call return it.
  explicit FileWriter(const std::string& logdir, const FileWriterOptions& options = FileWriterOptions());
  // Closes (as Close) and ignores errors: call Close to see them.
  ~FileWriter();
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  // Queues an Event with `summary` (a serialized Summary proto, as a summary op outputs) and
  // step `global_step`. InvalidArgument when the bytes are not a Summary.
  Status AddSummary(absl::string_view serialized_summary, int64_t global_step);
  // The same with the output of a summary op fetched from a session: a string scalar.
  // InvalidArgument for any other tensor.
  Status AddSummary(const Tensor& summary, int64_t global_step);
  // Queues a Summary with one simple_value (what TensorBoard plots as a scalar).
  Status AddScalar(const std::string& tag, double value, int64_t global_step);
  // Queues `event` as given (wall_time stamped when 0).
  Status AddEvent(const proto::Event& event);
  // Queues an Event with the graph as a serialized GraphDef (TensorBoard's graph tab).
  Status AddGraph(const Graph& graph, int64_t global_step = 0);
  Status AddGraphDef(const proto::GraphDef& graph_def, int64_t global_step = 0);
  // Queues a SessionLog event (START after a restart makes TensorBoard drop events of the old
  // run with larger steps; CHECKPOINT records checkpoint_path).
  Status AddSessionLog(SessionStatus status, const std::string& msg, int64_t global_step,
                       const std::string& checkpoint_path = "");

  // Waits until everything queued so far is written and handed to the OS; returns the first
  // error of any write.
  Status Flush();
  // Writes what is queued, syncs and closes the file, stops the thread. Returns the first error
  // of the writer's life (creation, writes, flush, sync, close). Idempotent: later calls return
  // the same status.
  Status Close();

  // The first error so far (OK while all is well).
  Status status() const;
  // The event file's path ("" when it could not be created).
  const std::string& path() const;
  const std::string& logdir() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Reading event files.
//
//   DFLOW_ASSIGN_OR_RETURN(auto reader, summary::EventFileReader::Open(path));
//   proto::Event e;
//   while ((s = reader->ReadNext(&e)).ok()) { ... }   // OutOfRange at the clean end
//
// Every record's two checksums are verified: a damaged, truncated or unparsable record is
// DataLoss naming the file and the record's offset; records longer than 256 MiB are DataLoss
// too, so a damaged length cannot make the reader allocate gigabytes. One reader per thread.
class EventFileReader {
 public:
  // NotFound when the file is missing. `env` (nullptr: the default) must outlive the reader.
  static StatusOr<std::unique_ptr<EventFileReader>> Open(const std::string& path, Env* env = nullptr);
  ~EventFileReader();

  // The next event. OutOfRange at the end of the file; DataLoss for a damaged record (the
  // reader does not move past it, so every later call returns the same error).
  Status ReadNext(proto::Event* event);
  // The offset of the next record.
  uint64_t offset() const { return offset_; }
  const std::string& path() const;

 private:
  EventFileReader();
  std::unique_ptr<RandomAccessFile> file_;
  uint64_t offset_ = 0;
};

// One scalar of an event file: a Summary value with simple_value, or with a tensor of one
// float, double, int32 or int64 element (TensorFlow 2's scalar summaries).
struct ScalarEvent {
  std::string tag;
  int64_t step = 0;
  double value = 0;
  double wall_time = 0;
  // The value was stored as a float (simple_value, a DT_FLOAT tensor): print it as one.
  bool single_precision = true;
};

// The scalars of `event` in order (none for events without a summary).
std::vector<ScalarEvent> ScalarsOfEvent(const proto::Event& event);
// Every scalar of the file at `path`, in order. Errors as EventFileReader.
StatusOr<std::vector<ScalarEvent>> ReadScalars(const std::string& path, Env* env = nullptr);

}  // namespace dflow::summary
