#include "base/table.h"

#include <cstring>
#include <memory>

#include "base/crc32c.h"

namespace dflow::table {

void PutFixed32(std::string* dst, uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  dst->append(b, 4);
}

void PutFixed64(std::string* dst, uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  dst->append(b, 8);
}

void PutVarint64(std::string* dst, uint64_t v) {
  while (v >= 0x80) {
    dst->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  dst->push_back(static_cast<char>(v));
}

void PutVarint32(std::string* dst, uint32_t v) { PutVarint64(dst, v); }

uint32_t DecodeFixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

uint64_t DecodeFixed64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

namespace {

bool GetVarint(absl::string_view* in, uint64_t* v, int max_bytes) {
  uint64_t r = 0;
  for (int i = 0; i < max_bytes && i < static_cast<int>(in->size()); ++i) {
    const uint64_t byte = static_cast<unsigned char>((*in)[i]);
    // The last allowed byte may only carry the bits left in the type.
    if (i == max_bytes - 1 && (byte >> (max_bytes == 5 ? 4 : 1)) != 0) return false;
    r |= (byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      *v = r;
      in->remove_prefix(i + 1);
      return true;
    }
  }
  return false;
}

}  // namespace

bool GetVarint32(absl::string_view* in, uint32_t* v) {
  uint64_t r = 0;
  if (!GetVarint(in, &r, 5)) return false;
  *v = static_cast<uint32_t>(r);
  return true;
}

bool GetVarint64(absl::string_view* in, uint64_t* v) { return GetVarint(in, v, 10); }

// ---- writer ----

namespace {

// A short key k with last <= k < next (LevelDB's FindShortestSeparator): the common prefix
// and one byte incremented, when that works; else `last` itself.
std::string ShortestSeparator(const std::string& last, absl::string_view next) {
  size_t n = std::min(last.size(), next.size());
  size_t i = 0;
  while (i < n && last[i] == next[i]) ++i;
  if (i < n) {
    const auto b = static_cast<unsigned char>(last[i]);
    if (b < 0xff && b + 1 < static_cast<unsigned char>(next[i])) {
      std::string r = last.substr(0, i + 1);
      r[i] = static_cast<char>(b + 1);
      return r;
    }
  }
  return last;
}

// A short key >= `last` (LevelDB's FindShortSuccessor).
std::string ShortSuccessor(const std::string& last) {
  for (size_t i = 0; i < last.size(); ++i) {
    const auto b = static_cast<unsigned char>(last[i]);
    if (b != 0xff) {
      std::string r = last.substr(0, i + 1);
      r[i] = static_cast<char>(b + 1);
      return r;
    }
  }
  return last;
}

// An index (or metaindex) block from whole keys, one restart per entry.
std::string BuildSimpleBlock(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string b;
  std::vector<uint32_t> restarts;
  for (const auto& [k, v] : entries) {
    restarts.push_back(static_cast<uint32_t>(b.size()));
    PutVarint32(&b, 0);
    PutVarint32(&b, static_cast<uint32_t>(k.size()));
    PutVarint32(&b, static_cast<uint32_t>(v.size()));
    b += k;
    b += v;
  }
  if (restarts.empty()) restarts.push_back(0);
  for (uint32_t r : restarts) PutFixed32(&b, r);
  PutFixed32(&b, static_cast<uint32_t>(restarts.size()));
  return b;
}

}  // namespace

TableBuilder::TableBuilder(WritableFile* file, Options options) : file_(file), options_(options) {
  if (options_.restart_interval < 1) options_.restart_interval = 1;
}

Status TableBuilder::Add(absl::string_view key, absl::string_view value) {
  if (!status_.ok()) return status_;
  if (finished_) return errors::FailedPrecondition("TableBuilder::Add after Finish");
  if (has_key_ && key <= absl::string_view(last_key_)) {
    status_ = errors::InvalidArgument("Table keys must be added in increasing order: '", key, "' after '", last_key_,
                                      "'");
    return status_;
  }
  if (key.size() > UINT32_MAX || value.size() > UINT32_MAX) {
    status_ = errors::InvalidArgument("Table entry too large: key of ", key.size(), " bytes, value of ", value.size(),
                                      " bytes");
    return status_;
  }
  if (pending_index_) {
    index_.emplace_back(ShortestSeparator(last_key_, key), pending_handle_);
    pending_index_ = false;
  }
  size_t shared = 0;
  if (block_entries_ == 0) {
    // A block starts with a whole key (its first restart point).
  } else if (entries_since_restart_ < options_.restart_interval) {
    const size_t n = std::min(last_key_.size(), key.size());
    while (shared < n && last_key_[shared] == key[shared]) ++shared;
  } else {
    restarts_.push_back(static_cast<uint32_t>(block_.size()));
    entries_since_restart_ = 0;
  }
  PutVarint32(&block_, static_cast<uint32_t>(shared));
  PutVarint32(&block_, static_cast<uint32_t>(key.size() - shared));
  PutVarint32(&block_, static_cast<uint32_t>(value.size()));
  block_.append(key.data() + shared, key.size() - shared);
  block_.append(value.data(), value.size());
  last_key_.assign(key.data(), key.size());
  has_key_ = true;
  ++entries_since_restart_;
  ++block_entries_;
  if (block_.size() >= options_.block_size) status_ = FlushDataBlock();
  return status_;
}

Status TableBuilder::WriteBlock(const std::string& contents, std::string* handle) {
  handle->clear();
  PutVarint64(handle, offset_);
  PutVarint64(handle, contents.size());
  std::string trailer(1, '\0');  // no compression
  uint32_t crc = crc32c::Extend(crc32c::Value(contents), trailer.data(), 1);
  PutFixed32(&trailer, crc32c::Mask(crc));
  RETURN_IF_ERROR(file_->Append(contents));
  RETURN_IF_ERROR(file_->Append(trailer));
  offset_ += contents.size() + trailer.size();
  return absl::OkStatus();
}

Status TableBuilder::FlushDataBlock() {
  if (block_entries_ == 0) return absl::OkStatus();
  for (uint32_t r : restarts_) PutFixed32(&block_, r);
  PutFixed32(&block_, static_cast<uint32_t>(restarts_.size()));
  RETURN_IF_ERROR(WriteBlock(block_, &pending_handle_));
  pending_index_ = true;
  block_.clear();
  restarts_.assign(1, 0);
  entries_since_restart_ = 0;
  block_entries_ = 0;
  return absl::OkStatus();
}

Status TableBuilder::Finish() {
  if (!status_.ok()) return status_;
  if (finished_) return errors::FailedPrecondition("TableBuilder::Finish called twice");
  finished_ = true;
  status_ = FlushDataBlock();
  if (!status_.ok()) return status_;
  if (pending_index_) {
    index_.emplace_back(ShortSuccessor(last_key_), pending_handle_);
    pending_index_ = false;
  }
  std::string meta_handle, index_handle;
  status_ = WriteBlock(BuildSimpleBlock({}), &meta_handle);
  if (status_.ok()) status_ = WriteBlock(BuildSimpleBlock(index_), &index_handle);
  if (!status_.ok()) return status_;
  std::string footer = meta_handle + index_handle;
  footer.resize(kFooterSize - 8, '\0');
  PutFixed64(&footer, kTableMagicNumber);
  status_ = file_->Append(footer);
  if (status_.ok()) offset_ += footer.size();
  return status_;
}

// ---- reader ----

namespace {

struct Handle {
  uint64_t offset = 0, size = 0;
};

class TableParser {
 public:
  TableParser(const RandomAccessFile& file, uint64_t size)
      : file_(file), size_(size), budget_(kExpansion * size + (uint64_t{64} << 20)) {}

  Status Parse(std::vector<std::pair<std::string, std::string>>* out) {
    if (size_ < kFooterSize) {
      return Corrupt(0, "the file has ", size_, " bytes, fewer than a table's ", kFooterSize, "-byte footer");
    }
    const uint64_t footer_at = size_ - kFooterSize;
    std::string footer;
    RETURN_IF_ERROR(ReadExact(footer_at, kFooterSize, &footer));
    if (DecodeFixed64(footer.data() + kFooterSize - 8) != kTableMagicNumber) {
      return Corrupt(footer_at + kFooterSize - 8, "bad magic number: not a table (LevelDB format)");
    }
    absl::string_view f(footer.data(), kFooterSize - 8);
    Handle meta, index;
    if (!GetHandle(&f, &meta) || !GetHandle(&f, &index)) return Corrupt(footer_at, "bad block handle in the footer");
    std::string index_block;
    RETURN_IF_ERROR(ReadBlock(index, footer_at, &index_block));
    std::vector<std::pair<std::string, std::string>> index_entries;
    RETURN_IF_ERROR(ParseBlock(index_block, index.offset, &index_entries));
    uint64_t prev_end = 0;
    for (const auto& [sep, value] : index_entries) {
      absl::string_view v = value;
      Handle h;
      if (!GetHandle(&v, &h) || !v.empty()) return Corrupt(index.offset, "bad data block handle in the index block");
      if (h.offset < prev_end) return Corrupt(index.offset, "data blocks overlap or are out of order");
      std::string block;
      RETURN_IF_ERROR(ReadBlock(h, footer_at, &block));
      prev_end = h.offset + h.size + kBlockTrailerSize;
      const size_t first = out->size();
      RETURN_IF_ERROR(ParseBlock(block, h.offset, out));
      for (size_t i = first; i < out->size(); ++i) {
        if (i > 0 && (*out)[i].first <= (*out)[i - 1].first) {
          return Corrupt(h.offset, "keys are not in increasing order");
        }
        if ((*out)[i].first > sep) return Corrupt(h.offset, "a key lies beyond its block's index key");
      }
    }
    return absl::OkStatus();
  }

 private:
  template <typename... Args>
  Status Corrupt(uint64_t offset, const Args&... args) const {
    return errors::DataLoss("Corrupt table ", file_.path(), " at offset ", offset, ": ", args...);
  }

  static bool GetHandle(absl::string_view* in, Handle* h) {
    return GetVarint64(in, &h->offset) && GetVarint64(in, &h->size);
  }

  Status ReadExact(uint64_t offset, uint64_t n, std::string* out) const {
    out->resize(n);
    if (n == 0) return absl::OkStatus();
    auto r = file_.Read(offset, n, out->data());
    if (!r.ok())
      return errors::DataLoss("Cannot read ", n, " bytes at offset ", offset, " of ", file_.path(), ": ",
                              r.status().message());
    if (r->size() != n) return Corrupt(offset, "the file ends after ", r->size(), " of ", n, " bytes");
    if (r->data() != out->data()) std::memmove(out->data(), r->data(), n);
    return absl::OkStatus();
  }

  // Reads block `h` (which must end before `limit`, the footer), checks its trailer, and
  // uncompresses it.
  Status ReadBlock(const Handle& h, uint64_t limit, std::string* contents) const {
    if (h.offset > limit || h.size > limit - h.offset || kBlockTrailerSize > limit - h.offset - h.size) {
      return Corrupt(h.offset, "block handle (offset ", h.offset, ", size ", h.size, ") lies outside the file");
    }
    std::string raw;
    RETURN_IF_ERROR(ReadExact(h.offset, h.size + kBlockTrailerSize, &raw));
    const char type = raw[h.size];
    const uint32_t expected = crc32c::Unmask(DecodeFixed32(raw.data() + h.size + 1));
    const uint32_t actual = crc32c::Value(raw.data(), h.size + 1);
    if (expected != actual) return Corrupt(h.offset, "block checksum mismatch");
    raw.resize(h.size);
    if (type == 0) {
      *contents = std::move(raw);
    } else if (type == 1) {
      auto u = SnappyUncompress(raw);
      if (!u.ok()) return Corrupt(h.offset, u.status().message());
      *contents = std::move(u).value();
    } else {
      return Corrupt(h.offset, "unknown block compression type ", static_cast<int>(static_cast<unsigned char>(type)));
    }
    return absl::OkStatus();
  }

  // The entries of a block (data or index), keys rebuilt from their shared prefixes.
  Status ParseBlock(const std::string& block, uint64_t at,
                    std::vector<std::pair<std::string, std::string>>* out) const {
    if (block.size() < 4) return Corrupt(at, "block of ", block.size(), " bytes is too short");
    const uint32_t num_restarts = DecodeFixed32(block.data() + block.size() - 4);
    if (num_restarts == 0 || num_restarts > (block.size() - 4) / 4) {
      return Corrupt(at, "bad restart count ", num_restarts, " in a block of ", block.size(), " bytes");
    }
    const size_t limit = block.size() - 4 - 4 * static_cast<size_t>(num_restarts);
    for (uint32_t i = 0; i < num_restarts; ++i) {
      if (DecodeFixed32(block.data() + limit + 4 * i) > limit) return Corrupt(at, "restart point out of range");
    }
    absl::string_view in(block.data(), limit);
    std::string key;
    while (!in.empty()) {
      uint32_t shared = 0, unshared = 0, vlen = 0;
      if (!GetVarint32(&in, &shared) || !GetVarint32(&in, &unshared) || !GetVarint32(&in, &vlen)) {
        return Corrupt(at, "bad entry header in block");
      }
      if (shared > key.size()) return Corrupt(at, "entry shares ", shared, " bytes of a ", key.size(), "-byte key");
      if (unshared > in.size() || vlen > in.size() - unshared) return Corrupt(at, "entry runs past its block");
      // Shared prefixes let a small file describe huge keys; bound what it can make us hold.
      const uint64_t entry_bytes = static_cast<uint64_t>(shared) + unshared + vlen + 32;
      if (entry_bytes > budget_) {
        return Corrupt(at, "the entries expand to more than ", kExpansion, " times the file's size");
      }
      budget_ -= entry_bytes;
      key.resize(shared);
      key.append(in.data(), unshared);
      in.remove_prefix(unshared);
      out->emplace_back(key, std::string(in.data(), vlen));
      in.remove_prefix(vlen);
    }
    return absl::OkStatus();
  }

  static constexpr uint64_t kExpansion = 64;
  const RandomAccessFile& file_;
  uint64_t size_;
  mutable uint64_t budget_;  // bytes the parsed entries may still take
};

}  // namespace

StatusOr<std::vector<std::pair<std::string, std::string>>> ReadTable(const RandomAccessFile& file, uint64_t size,
                                                                     uint64_t max_bytes) {
  if (size > max_bytes) {
    return errors::ResourceExhausted("Table ", file.path(), " has ", size, " bytes, more than the limit of ",
                                     max_bytes);
  }
  std::vector<std::pair<std::string, std::string>> out;
  RETURN_IF_ERROR(TableParser(file, size).Parse(&out));
  return out;
}

// ---- Snappy ----

StatusOr<std::string> SnappyUncompress(absl::string_view in) {
  uint32_t n = 0;
  if (!GetVarint32(&in, &n)) return errors::DataLoss("Snappy: bad uncompressed length");
  if (n > 32 * static_cast<uint64_t>(in.size()) + 64) {
    return errors::DataLoss("Snappy: declared length ", n, " is impossible for ", in.size(), " compressed bytes");
  }
  std::string out;
  out.reserve(n);
  while (!in.empty()) {
    const auto tag = static_cast<unsigned char>(in[0]);
    in.remove_prefix(1);
    uint64_t len = 0, offset = 0;
    if ((tag & 3) == 0) {  // literal
      len = tag >> 2;
      if (len >= 60) {
        const size_t bytes = len - 59;
        if (in.size() < bytes) return errors::DataLoss("Snappy: literal length cut off");
        len = 0;
        for (size_t i = 0; i < bytes; ++i) len |= static_cast<uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
        in.remove_prefix(bytes);
      }
      len += 1;
      if (len > in.size()) return errors::DataLoss("Snappy: literal runs past the input");
      if (len > n - out.size()) return errors::DataLoss("Snappy: output longer than declared");
      out.append(in.data(), len);
      in.remove_prefix(len);
      continue;
    }
    if ((tag & 3) == 1) {
      if (in.empty()) return errors::DataLoss("Snappy: copy cut off");
      len = ((tag >> 2) & 7) + 4;
      offset = (static_cast<uint64_t>(tag >> 5) << 8) | static_cast<unsigned char>(in[0]);
      in.remove_prefix(1);
    } else {
      const size_t bytes = (tag & 3) == 2 ? 2 : 4;
      if (in.size() < bytes) return errors::DataLoss("Snappy: copy cut off");
      len = (tag >> 2) + 1;
      for (size_t i = 0; i < bytes; ++i) offset |= static_cast<uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
      in.remove_prefix(bytes);
    }
    if (offset == 0 || offset > out.size()) return errors::DataLoss("Snappy: copy offset ", offset, " out of range");
    if (len > n - out.size()) return errors::DataLoss("Snappy: output longer than declared");
    const size_t from = out.size() - offset;
    for (uint64_t i = 0; i < len; ++i) out.push_back(out[from + i]);  // may overlap what it appends
  }
  if (out.size() != n) return errors::DataLoss("Snappy: ", out.size(), " bytes decoded, ", n, " declared");
  return out;
}

}  // namespace dflow::table
