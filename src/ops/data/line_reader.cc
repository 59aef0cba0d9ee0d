#include "ops/data/line_reader.h"

#include <cstring>

namespace dflow {

LineReader::LineReader(std::unique_ptr<RandomAccessFile> file, size_t buffer_size)
    : file_(std::move(file)), buffer_(std::max<size_t>(buffer_size, 1024), '\0') {}

Status LineReader::Fill() {
  // Keep the unread bytes at the front and read after them.
  if (pos_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
  }
  if (end_ == buffer_.size()) return absl::OkStatus();
  StatusOr<absl::string_view> got = file_->Read(offset_, buffer_.size() - end_, buffer_.data() + end_);
  if (!got.ok()) {
    if (absl::IsOutOfRange(got.status())) {
      eof_ = true;
      return absl::OkStatus();
    }
    return got.status();
  }
  if (got->data() != buffer_.data() + end_) std::memmove(buffer_.data() + end_, got->data(), got->size());
  if (got->empty()) eof_ = true;
  end_ += got->size();
  offset_ += got->size();
  return absl::OkStatus();
}

StatusOr<bool> LineReader::ReadLine(std::string* line) {
  line->clear();
  while (true) {
    const char* start = buffer_.data() + pos_;
    const void* nl = std::memchr(start, '\n', end_ - pos_);
    if (nl != nullptr) {
      size_t n = static_cast<const char*>(nl) - start;
      line->append(start, n);
      pos_ += n + 1;
      break;
    }
    line->append(start, end_ - pos_);
    pos_ = end_;
    if (line->size() > kMaxLineBytes) {
      return errors::InvalidArgument(file_->path(), ":", line_number_ + 1, ": line is longer than ", kMaxLineBytes,
                                     " bytes");
    }
    if (eof_) {
      if (line->empty()) return false;
      break;
    }
    RETURN_IF_ERROR(Fill());
  }
  if (!line->empty() && line->back() == '\r') line->pop_back();
  ++line_number_;
  return true;
}

}  // namespace dflow
