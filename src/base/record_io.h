// TFRecord files: the framing of TensorFlow's event files and TFRecordDataset.
//
// Each record is
//   uint64 length (little endian)   uint32 masked CRC32C of those 8 bytes
//   byte data[length]                uint32 masked CRC32C of the data
// Readers verify both checksums: a damaged or cut-off record is DataLoss naming the file and
// the record's offset, never a crash or an unbounded allocation.
#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "base/env.h"
#include "base/status.h"

namespace dflow {

// The 12-byte header and 4-byte footer around `data`.
std::string EncodeRecordHeader(absl::string_view data);
std::string EncodeRecordFooter(absl::string_view data);

// Appends records to a file it does not own. Not thread-safe.
class RecordWriter {
 public:
  explicit RecordWriter(WritableFile* file) : file_(file) {}
  Status WriteRecord(absl::string_view data);
  Status Flush() { return file_->Flush(); }
  Status Sync() { return file_->Sync(); }

 private:
  WritableFile* file_;
};

// Reads records in order from a file it does not own. Thread-compatible (one reader per thread).
class RecordReader {
 public:
  // Records longer than max_record_bytes are DataLoss (a damaged length cannot make the reader
  // allocate gigabytes).
  explicit RecordReader(const RandomAccessFile* file, uint64_t max_record_bytes = uint64_t{1} << 31)
      : file_(file), max_record_bytes_(max_record_bytes) {}

  // Reads the record at *offset into *record and advances *offset past it. OutOfRange at the
  // clean end of the file; DataLoss for a truncated or corrupt record (naming file and offset).
  Status ReadRecord(uint64_t* offset, std::string* record);

 private:
  const RandomAccessFile* file_;
  uint64_t max_record_bytes_;
};

}  // namespace dflow
