// Reading event files (TensorFlow's tf.compat.v1.train.summary_iterator).
//
//   ASSIGN_OR_RETURN(auto reader, summary::EventFileReader::Open(path));
//   proto::Event e;
//   while ((s = reader->ReadNext(&e)).ok()) { ... }   // OutOfRange at the clean end
//
// Every record's two checksums are verified: a damaged, truncated or unparsable record is
// DataLoss naming the file and the record's offset; records longer than 256 MiB are DataLoss
// too, so a damaged length cannot make the reader allocate gigabytes. One reader per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/status.h"

namespace dflow::proto {
class Event;
}

namespace dflow::summary {

class EventFileReader {
 public:
  // NotFound when the file is missing. `env` (nullptr: Env::Default()) must outlive the reader.
  static StatusOr<std::unique_ptr<EventFileReader>> Open(const std::string& path, Env* env = nullptr);
  ~EventFileReader();

  // The next event. OutOfRange at the end of the file; DataLoss for a damaged record (the
  // reader does not move past it, so every later call returns the same error).
  Status ReadNext(proto::Event* event);
  // The offset of the next record.
  uint64_t offset() const { return offset_; }
  const std::string& path() const;

 private:
  EventFileReader() = default;
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
