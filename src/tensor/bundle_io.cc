#include "tensor/bundle_io.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>

#include "base/crc32c.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace dflow::bundle_io {
namespace {

constexpr uint32_t kPoly = 0x82f63b78;           // crc32c, reflected
constexpr size_t kCrcPiece = size_t{256} << 10;  // copied, then checksummed while in the cache
constexpr uint64_t kReadPiece = uint64_t{4} << 20;
constexpr uint64_t kMinReadPerThread = uint64_t{16} << 20;
constexpr int kReadThreads = 4;
constexpr uint64_t kHugeDestination = uint64_t{64} << 20;

uint32_t Gf2Times(const uint32_t* mat, uint32_t vec) {
  uint32_t sum = 0;
  for (; vec != 0; vec >>= 1, ++mat) {
    if (vec & 1) sum ^= *mat;
  }
  return sum;
}

void Gf2Square(uint32_t* square, const uint32_t* mat) {
  for (int n = 0; n < 32; ++n) square[n] = Gf2Times(mat, mat[n]);
}

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

// zlib's crc32_combine with crc32c's polynomial: the operator that appends len_b zero bytes,
// applied to crc_a by repeated squaring.
uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b) {
  if (len_b == 0) return crc_a;
  uint32_t even[32], odd[32];
  odd[0] = kPoly;  // one zero bit
  uint32_t row = 1;
  for (int n = 1; n < 32; ++n, row <<= 1) odd[n] = row;
  Gf2Square(even, odd);  // two zero bits
  Gf2Square(odd, even);  // four
  do {
    Gf2Square(even, odd);
    if (len_b & 1) crc_a = Gf2Times(even, crc_a);
    len_b >>= 1;
    if (len_b == 0) break;
    Gf2Square(odd, even);
    if (len_b & 1) crc_a = Gf2Times(odd, crc_a);
    len_b >>= 1;
  } while (len_b != 0);
  return crc_a ^ crc_b;
}

namespace {

constexpr size_t kStride = 4096;  // bytes per stream; three streams per round

// shift(v): the raw crc32c register v after kStride zero bytes, as four tables of 256.
struct ShiftTable {
  uint32_t t[4][256];
  ShiftTable() {
    uint32_t basis[32];
    for (int i = 0; i < 32; ++i) basis[i] = Crc32cCombine(uint32_t{1} << i, 0, kStride);
    for (int k = 0; k < 4; ++k) {
      for (uint32_t b = 0; b < 256; ++b) {
        uint32_t v = 0;
        for (int i = 0; i < 8; ++i) {
          if (b & (1u << i)) v ^= basis[8 * k + i];
        }
        t[k][b] = v;
      }
    }
  }
  uint32_t Shift(uint32_t v) const {
    return t[0][v & 0xff] ^ t[1][(v >> 8) & 0xff] ^ t[2][(v >> 16) & 0xff] ^ t[3][v >> 24];
  }
};

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t ExtendThreeWay(uint32_t crc, const char* p, size_t n) {
  static const ShiftTable* shift = new ShiftTable();
  uint32_t s = ~crc;  // the raw register
  while (n >= 3 * kStride) {
    uint64_t c0 = s, c1 = 0, c2 = 0;
    for (size_t i = 0; i < kStride; i += 8) {
      uint64_t w0, w1, w2;
      std::memcpy(&w0, p + i, 8);
      std::memcpy(&w1, p + kStride + i, 8);
      std::memcpy(&w2, p + 2 * kStride + i, 8);
      c0 = _mm_crc32_u64(c0, w0);
      c1 = _mm_crc32_u64(c1, w1);
      c2 = _mm_crc32_u64(c2, w2);
    }
    // crc(s, A B C) = shift(shift(crc(s, A)) ^ crc(0, B)) ^ crc(0, C): the register is linear.
    s = shift->Shift(shift->Shift(static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1)) ^ static_cast<uint32_t>(c2);
    p += 3 * kStride;
    n -= 3 * kStride;
  }
  return crc32c::Extend(~s, p, n);
}
#endif

}  // namespace

uint32_t Crc32cExtend(uint32_t crc, const char* data, size_t n) {
#if defined(__x86_64__)
  static const bool has_sse42 = __builtin_cpu_supports("sse4.2");
  if (has_sse42) return ExtendThreeWay(crc, data, n);
#endif
  return crc32c::Extend(crc, data, n);
}

// ---- StagedWriter ----

StagedWriter::StagedWriter(WritableFile* file, size_t block_bytes)
    : file_(file), block_bytes_(RoundUp(std::max<size_t>(block_bytes, 1), WritableFile::kDirectWriteAlignment)) {
  for (Block& b : blocks_) free_.push_back(&b);
  // An empty WriteAt tells whether the file offers positional writes at all.
  positional_ = file_->WriteAt(0, absl::string_view()).ok();
  direct_ = positional_ && file_->EnableDirectWrites().ok();
}

StagedWriter::~StagedWriter() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (thread_status_.ok()) thread_status_ = errors::Cancelled("the bundle writer was destroyed");
  }
  Join().IgnoreError();
  for (char* m : memory_) std::free(m);
}

Status StagedWriter::WriteBlock(const Block& b) {
  if (!positional_) return file_->Append(absl::string_view(b.data, b.used));
  size_t n = b.used;
  if (direct_ && n % WritableFile::kDirectWriteAlignment != 0) {
    // The last block: padded with zeros to the alignment; Finish truncates the file after it.
    n = RoundUp(n, WritableFile::kDirectWriteAlignment);
    std::memset(b.data + b.used, 0, n - b.used);
  }
  RETURN_IF_ERROR(file_->WriteAt(b.offset, absl::string_view(b.data, n)));
  // Buffered: the disk starts on this block now rather than at the final fsync.
  if (!direct_) file_->StartWriteback(b.offset, n).IgnoreError();
  return absl::OkStatus();
}

void StagedWriter::Loop() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    cv_.wait(l, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopped, all written
    Block* b = queue_.front();
    queue_.pop_front();
    const bool write = thread_status_.ok();
    l.unlock();
    Status s = write ? WriteBlock(*b) : absl::OkStatus();
    l.lock();
    if (!s.ok() && thread_status_.ok()) thread_status_ = s;
    free_.push_back(b);
    cv_.notify_all();
  }
}

Status StagedWriter::Submit(Block* b) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!started_) {
      try {
        thread_ = std::thread([this] { Loop(); });
        started_ = true;
      } catch (const std::system_error&) {
        // No thread to be had (a process at its limit): this block is written here, and the
        // next one tries again.
      }
    }
    if (started_) {
      queue_.push_back(b);
      cv_.notify_all();
      return thread_status_;
    }
  }
  Status s = WriteBlock(*b);
  std::lock_guard<std::mutex> l(mu_);
  free_.push_back(b);
  if (!s.ok() && thread_status_.ok()) thread_status_ = s;
  return thread_status_;
}

Status StagedWriter::Join() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> l(mu_);
  return thread_status_;
}

Status StagedWriter::Append(absl::string_view bytes, uint32_t* crc) {
  while (!bytes.empty()) {
    if (!status_.ok()) return status_;
    if (current_ == nullptr) {
      std::unique_lock<std::mutex> l(mu_);
      // The thread always hands blocks back (it skips writing them after an error).
      cv_.wait(l, [&] { return !free_.empty(); });
      if (!thread_status_.ok()) return status_ = thread_status_;
      current_ = free_.back();
      free_.pop_back();
      l.unlock();
      if (current_->data == nullptr) {
        current_->data = static_cast<char*>(std::aligned_alloc(WritableFile::kDirectWriteAlignment, block_bytes_));
        if (current_->data == nullptr) {
          return status_ = errors::ResourceExhausted("Cannot allocate a staging buffer of ", block_bytes_,
                                                     " bytes for ", file_->path());
        }
        memory_.push_back(current_->data);
      }
      current_->used = 0;
      current_->offset = size_;
    }
    const size_t n = std::min(bytes.size(), block_bytes_ - current_->used);
    char* dst = current_->data + current_->used;
    for (size_t done = 0; done < n; done += kCrcPiece) {
      const size_t m = std::min(kCrcPiece, n - done);
      std::memcpy(dst + done, bytes.data() + done, m);
      if (crc != nullptr) *crc = Crc32cExtend(*crc, dst + done, m);
    }
    bytes.remove_prefix(n);
    current_->used += n;
    size_ += n;
    if (current_->used == block_bytes_) {
      Block* full = current_;
      current_ = nullptr;
      status_ = Submit(full);
    }
  }
  return status_;
}

Status StagedWriter::Finish() {
  if (status_.ok() && current_ != nullptr && current_->used > 0) {
    Block* last = current_;
    current_ = nullptr;
    // Without a thread (a small file) the caller writes its only block itself.
    status_ = started_ ? Submit(last) : WriteBlock(*last);
  }
  Status joined = Join();
  if (status_.ok()) status_ = joined;
  if (status_.ok() && direct_ && size_ % WritableFile::kDirectWriteAlignment != 0) status_ = file_->Truncate(size_);
  return status_;
}

// ---- reads ----

StatusOr<uint32_t> ReadAndChecksum(const RandomAccessFile& file, uint64_t offset, uint64_t size, char* dst,
                                   int threads) {
  // Four even on fewer cores: a file not in the page cache reads faster with more requests in flight.
  if (threads <= 0) threads = kReadThreads;
  const uint64_t parts = std::clamp<uint64_t>(size / kMinReadPerThread, 1, static_cast<uint64_t>(threads));
  const uint64_t per = RoundUp((size + parts - 1) / parts, kReadPiece);
  struct Part {
    Status status;
    uint32_t crc = 0;
    uint64_t begin = 0, end = 0;
  };
  std::vector<Part> part(parts);
  for (uint64_t i = 0; i < parts; ++i) {
    part[i].begin = std::min(size, i * per);
    part[i].end = std::min(size, (i + 1) * per);
  }
  constexpr uint64_t kAlign = RandomAccessFile::kDirectReadAlignment;
  // Pieces not in the page cache are read with O_DIRECT into an aligned buffer and copied from
  // there: no page cache to fill, more throughput from the disk.
  auto read_direct = [&](uint64_t at, uint64_t n, char* out, char* bounce) -> StatusOr<bool> {
    const uint64_t begin = at / kAlign * kAlign, end = (at + n + kAlign - 1) / kAlign * kAlign;
    auto r = file.ReadDirect(begin, end - begin, bounce);
    if (!r.ok()) return false;  // not offered (or refused): read as usual
    if (*r < at + n - begin) return errors::OutOfRange("the file ends early");
    std::memcpy(out, bounce + (at - begin), n);
    return true;
  };
  auto work = [&](Part* p) {
    char* bounce = nullptr;
    bool direct = true;
    for (uint64_t pos = p->begin; pos < p->end && p->status.ok(); pos += kReadPiece) {
      const uint64_t n = std::min(kReadPiece, p->end - pos);
      if (direct && n >= kAlign && !file.InPageCache(offset + pos, n)) {
        if (bounce == nullptr) bounce = static_cast<char*>(std::aligned_alloc(kAlign, kReadPiece + 2 * kAlign));
        StatusOr<bool> done = bounce != nullptr ? read_direct(offset + pos, n, dst + pos, bounce) : false;
        if (!done.ok()) {
          p->status = done.status();
          break;
        }
        if (*done) {
          p->crc = Crc32cExtend(p->crc, dst + pos, n);
          continue;
        }
        direct = false;
      }
      auto r = file.Read(offset + pos, n, dst + pos);
      if (!r.ok()) {
        p->status = r.status();
      } else if (r->size() != n) {
        p->status = errors::OutOfRange("the file ends early");
      } else {
        if (r->data() != dst + pos) std::memmove(dst + pos, r->data(), n);
        p->crc = Crc32cExtend(p->crc, dst + pos, n);
      }
    }
    std::free(bounce);
  };
#ifdef MADV_HUGEPAGE
  // A large destination is fresh memory that the reads touch first: huge pages halve the cost of
  // faulting it in (512 times fewer faults). Only the 2 MiB-aligned inside of a buffer this large
  // (always mapped by itself) is marked; failure changes nothing.
  if (size >= kHugeDestination) {
    constexpr uintptr_t kHuge = uintptr_t{2} << 20;
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(dst) + kHuge - 1) & ~(kHuge - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(dst) + size) & ~(kHuge - 1);
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  }
#endif
  std::vector<std::thread> helpers;
  uint64_t first_inline = parts;  // the parts no thread took, read here
  for (uint64_t i = 1; i < parts; ++i) {
    try {
      helpers.emplace_back(work, &part[i]);
    } catch (const std::system_error&) {
      first_inline = i;
      break;
    }
  }
  work(&part[0]);
  for (uint64_t i = first_inline; i < parts; ++i) work(&part[i]);
  for (std::thread& t : helpers) t.join();
  uint32_t crc = 0;
  for (const Part& p : part) {
    if (!p.status.ok()) return p.status;
    crc = Crc32cCombine(crc, p.crc, p.end - p.begin);
  }
  return crc;
}

}  // namespace dflow::bundle_io
