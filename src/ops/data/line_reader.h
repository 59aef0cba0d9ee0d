// LineReader: reads a text file line by line through a fixed read-ahead buffer. Lines end at
// '\n'; a trailing '\r' is dropped; a last line without '\n' counts. Lines longer than
// kMaxLineBytes are InvalidArgument naming the file and line (a file without newlines cannot
// make it allocate without bound). Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/env.h"

namespace dflow {

class LineReader {
 public:
  static constexpr size_t kMaxLineBytes = size_t{64} << 20;

  LineReader(std::unique_ptr<RandomAccessFile> file, size_t buffer_size);
  // The next line into *line (false at the end of the file).
  StatusOr<bool> ReadLine(std::string* line);
  // 1-based number of the line last read.
  int64_t line_number() const { return line_number_; }
  const std::string& path() const { return file_->path(); }

 private:
  Status Fill();

  std::unique_ptr<RandomAccessFile> file_;
  std::string buffer_;
  size_t pos_ = 0, end_ = 0;  // unread bytes are buffer_[pos_, end_)
  uint64_t offset_ = 0;       // file offset of buffer_[end_]
  bool eof_ = false;
  int64_t line_number_ = 0;
};

}  // namespace dflow
