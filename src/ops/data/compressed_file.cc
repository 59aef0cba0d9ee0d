#include "ops/data/compressed_file.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"

namespace dflow::data {
namespace {

constexpr size_t kChunk = 256 << 10;

class InflatingFile : public RandomAccessFile {
 public:
  explicit InflatingFile(std::unique_ptr<RandomAccessFile> file) : file_(std::move(file)) {}
  ~InflatingFile() override {
    if (started_) inflateEnd(&z_);
  }

  StatusOr<absl::string_view> Read(uint64_t offset, size_t n, char* scratch) const override {
    std::lock_guard<std::mutex> l(mu_);
    if (offset < start_) RETURN_IF_ERROR(Restart());
    while (!done_ && offset + n > start_ + buf_.size()) RETURN_IF_ERROR(InflateMore(offset));
    const uint64_t end = start_ + buf_.size();
    if (offset > end || (offset == end && n > 0))
      return errors::OutOfRange("Read at ", offset, " past the end of ", path(), " (", end, " bytes)");
    const size_t got = static_cast<size_t>(std::min<uint64_t>(n, end - offset));
    std::memcpy(scratch, buf_.data() + (offset - start_), got);
    return absl::string_view(scratch, got);
  }
  const std::string& path() const override { return file_->path(); }

 private:
  Status Restart() const {
    if (started_) inflateEnd(&z_);
    started_ = false;
    done_ = false;
    start_ = 0;
    in_offset_ = 0;
    buf_.clear();
    return absl::OkStatus();
  }

  Status Bad(const std::string& what) const {
    return errors::DataLoss("Compressed file ", path(), ": ", what, " (after ", in_offset_, " compressed bytes)");
  }

  // Inflates another chunk; bytes before `keep_from` may be dropped.
  Status InflateMore(uint64_t keep_from) const {
    if (!started_) {
      std::memset(&z_, 0, sizeof(z_));
      // 15 + 32: a zlib or a gzip header, detected.
      if (inflateInit2(&z_, 15 + 32) != Z_OK) return errors::Internal("inflateInit2 failed");
      started_ = true;
    }
    if (keep_from > start_) {
      const size_t drop = static_cast<size_t>(std::min<uint64_t>(keep_from - start_, buf_.size()));
      buf_.erase(0, drop);
      start_ += drop;
    }
    if (z_.avail_in == 0) {
      in_.resize(kChunk);
      auto got = file_->Read(in_offset_, kChunk, in_.data());
      if (!got.ok() && !absl::IsOutOfRange(got.status())) return got.status();
      const size_t len = got.ok() ? got->size() : 0;
      if (len == 0) {
        done_ = true;
        if (!stream_ended_) return Bad("the stream is cut off");
        return absl::OkStatus();
      }
      if (got->data() != in_.data()) std::memmove(in_.data(), got->data(), len);
      in_offset_ += len;
      z_.next_in = reinterpret_cast<Bytef*>(in_.data());
      z_.avail_in = static_cast<uInt>(len);
    }
    if (stream_ended_) {
      // Another gzip member after the first (concatenated streams read as one).
      if (inflateReset(&z_) != Z_OK) return Bad("cannot restart the stream");
      stream_ended_ = false;
    }
    const size_t old = buf_.size();
    buf_.resize(old + kChunk);
    z_.next_out = reinterpret_cast<Bytef*>(buf_.data() + old);
    z_.avail_out = kChunk;
    const int rc = inflate(&z_, Z_NO_FLUSH);
    buf_.resize(old + (kChunk - z_.avail_out));
    if (rc == Z_STREAM_END) {
      stream_ended_ = true;
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return Bad(z_.msg != nullptr ? z_.msg : absl::StrCat("inflate error ", rc));
    }
    return absl::OkStatus();
  }

  std::unique_ptr<RandomAccessFile> file_;
  mutable std::mutex mu_;
  mutable z_stream z_{};
  mutable bool started_ = false, done_ = false, stream_ended_ = false;
  mutable uint64_t start_ = 0, in_offset_ = 0;  // uncompressed offset of buf_[0]; compressed bytes read
  mutable std::string buf_, in_;
};

class DeflatingFile : public WritableFile {
 public:
  DeflatingFile(std::unique_ptr<WritableFile> file, bool gzip) : file_(std::move(file)) {
    std::memset(&z_, 0, sizeof(z_));
    ok_ = deflateInit2(&z_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, gzip ? 15 + 16 : 15, 8, Z_DEFAULT_STRATEGY) == Z_OK;
  }
  ~DeflatingFile() override {
    if (ok_) deflateEnd(&z_);
  }
  Status Append(absl::string_view data) override { return Deflate(data, Z_NO_FLUSH); }
  Status Flush() override {
    RETURN_IF_ERROR(Deflate({}, Z_SYNC_FLUSH));
    return file_->Flush();
  }
  Status Sync() override {
    RETURN_IF_ERROR(Flush());
    return file_->Sync();
  }
  Status Close() override {
    if (closed_) return absl::OkStatus();
    closed_ = true;
    Status s = Deflate({}, Z_FINISH);
    Status c = file_->Close();
    return s.ok() ? c : s;
  }
  const std::string& path() const override { return file_->path(); }

 private:
  Status Deflate(absl::string_view data, int flush) {
    if (!ok_) return errors::Internal("deflateInit2 failed for ", path());
    if (closed_ && flush != Z_FINISH) return errors::FailedPrecondition("Append to closed file ", path());
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z_.avail_in = static_cast<uInt>(data.size());
    char out[kChunk / 4];
    for (;;) {
      z_.next_out = reinterpret_cast<Bytef*>(out);
      z_.avail_out = sizeof(out);
      const int rc = deflate(&z_, flush);
      if (rc == Z_STREAM_ERROR) return errors::Internal("deflate failed for ", path());
      const size_t have = sizeof(out) - z_.avail_out;
      if (have > 0) RETURN_IF_ERROR(file_->Append(absl::string_view(out, have)));
      if (flush == Z_FINISH ? rc == Z_STREAM_END : (z_.avail_in == 0 && z_.avail_out != 0)) break;
    }
    return absl::OkStatus();
  }

  std::unique_ptr<WritableFile> file_;
  z_stream z_{};
  bool ok_ = false, closed_ = false;
};

}  // namespace

Status CheckCompressionType(const std::string& compression_type) {
  if (compression_type.empty() || compression_type == "ZLIB" || compression_type == "GZIP") return absl::OkStatus();
  return errors::InvalidArgument("Unsupported compression_type '", compression_type,
                                 "': TFRecord files are uncompressed (\"\"), \"ZLIB\" or \"GZIP\"");
}

StatusOr<std::unique_ptr<RandomAccessFile>> NewInflatingFile(std::unique_ptr<RandomAccessFile> file,
                                                             const std::string& compression_type) {
  RETURN_IF_ERROR(CheckCompressionType(compression_type));
  if (compression_type.empty()) return file;
  return std::unique_ptr<RandomAccessFile>(std::make_unique<InflatingFile>(std::move(file)));
}

StatusOr<std::unique_ptr<WritableFile>> NewDeflatingFile(std::unique_ptr<WritableFile> file,
                                                         const std::string& compression_type) {
  RETURN_IF_ERROR(CheckCompressionType(compression_type));
  if (compression_type.empty()) return file;
  return std::unique_ptr<WritableFile>(std::make_unique<DeflatingFile>(std::move(file), compression_type == "GZIP"));
}

}  // namespace dflow::data
