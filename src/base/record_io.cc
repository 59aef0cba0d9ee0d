#include "base/record_io.h"

#include <algorithm>
#include <cstring>

#include "base/crc32c.h"

namespace dflow {
namespace {

void PutFixed32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void PutFixed64(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint32_t GetFixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
uint64_t GetFixed64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

}  // namespace

std::string EncodeRecordHeader(absl::string_view data) {
  std::string h(12, '\0');
  PutFixed64(h.data(), data.size());
  PutFixed32(h.data() + 8, crc32c::Mask(crc32c::Value(h.data(), 8)));
  return h;
}

std::string EncodeRecordFooter(absl::string_view data) {
  std::string f(4, '\0');
  PutFixed32(f.data(), crc32c::Mask(crc32c::Value(data)));
  return f;
}

Status RecordWriter::WriteRecord(absl::string_view data) {
  RETURN_IF_ERROR(file_->Append(EncodeRecordHeader(data)));
  RETURN_IF_ERROR(file_->Append(data));
  return file_->Append(EncodeRecordFooter(data));
}

Status RecordReader::ReadRecord(uint64_t* offset, std::string* record) {
  char header[12];
  auto h = file_->Read(*offset, sizeof(header), header);
  if (!h.ok()) {
    if (absl::IsOutOfRange(h.status())) return errors::OutOfRange("End of file ", file_->path());
    return h.status();
  }
  if (h->size() < sizeof(header)) {
    return errors::DataLoss("Truncated record header at offset ", *offset, " in ", file_->path(), " (", h->size(),
                            " of 12 bytes)");
  }
  if (crc32c::Unmask(GetFixed32(header + 8)) != crc32c::Value(header, 8)) {
    return errors::DataLoss("Corrupt record length (checksum mismatch) at offset ", *offset, " in ", file_->path());
  }
  uint64_t length = GetFixed64(header);
  if (length > max_record_bytes_) {
    return errors::DataLoss("Record at offset ", *offset, " in ", file_->path(), " claims ", length,
                            " bytes, more than the limit of ", max_record_bytes_);
  }
  // Read data and footer together; a short read is a truncated file. The buffer grows with the
  // bytes that arrive (by 1 MiB, or by what arrived so far when that is more), so a length whose
  // header checksum was forged costs at most twice the file's bytes, not the limit.
  constexpr uint64_t kStep = uint64_t{1} << 20;
  const uint64_t want = length + 4;
  std::string buf;
  while (buf.size() < want) {
    const size_t have = buf.size();
    const size_t n = static_cast<size_t>(std::min<uint64_t>(want - have, std::max<uint64_t>(kStep, have)));
    buf.resize(have + n);
    auto d = file_->Read(*offset + 12 + have, n, buf.data() + have);
    size_t got = d.ok() ? d->size() : 0;
    if (!d.ok() && !absl::IsOutOfRange(d.status())) return d.status();
    if (got > 0 && d->data() != buf.data() + have) std::memmove(buf.data() + have, d->data(), got);
    if (got < n) {
      return errors::DataLoss("Truncated record at offset ", *offset, " in ", file_->path(), ": ", have + got, " of ",
                              want, " bytes of data and checksum");
    }
  }
  if (crc32c::Unmask(GetFixed32(buf.data() + length)) != crc32c::Value(buf.data(), length)) {
    return errors::DataLoss("Corrupt record data (checksum mismatch) at offset ", *offset, " in ", file_->path());
  }
  buf.resize(length);
  *record = std::move(buf);
  *offset += 12 + length + 4;
  return absl::OkStatus();
}

}  // namespace dflow
