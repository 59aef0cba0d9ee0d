// The data-file I/O of tensor bundles (tensor_bundle.h): a writer that streams the bytes through
// page-aligned staging buffers to a background thread (O_DIRECT where the file system allows: no
// copy into the page cache, no writeback left for the final fsync), and reads of large tensors
// split across threads, checksummed as they arrive.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/env.h"
#include "base/status.h"

namespace dflow::bundle_io {

// crc32c::Extend, three times as fast on large inputs (three interleaved streams, joined).
uint32_t Crc32cExtend(uint32_t crc, const char* data, size_t n);

// crc32c of A followed by B, from crc32c(A), crc32c(B) and the length of B (unmasked values).
uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);

// Writes a file sequentially through `file` (not owned; it must outlive the writer). Bytes are
// copied into staging buffers of `block_bytes` (a multiple of the direct-write alignment); full
// buffers are written by one background thread with WriteAt (O_DIRECT when EnableDirectWrites
// succeeds), or with Append when the file offers no WriteAt. Not thread-safe. The first error
// sticks; Finish or the destructor joins the thread on every path.
class StagedWriter {
 public:
  static constexpr size_t kDefaultBlockBytes = size_t{8} << 20;
  static constexpr int kBlocks = 3;  // one being filled, up to two being written

  explicit StagedWriter(WritableFile* file, size_t block_bytes = kDefaultBlockBytes);
  ~StagedWriter();
  StagedWriter(const StagedWriter&) = delete;
  StagedWriter& operator=(const StagedWriter&) = delete;

  // Appends `bytes`; with `crc` non-null, extends *crc (unmasked) over them while they are hot in
  // the cache.
  Status Append(absl::string_view bytes, uint32_t* crc = nullptr);
  // Writes what is left, waits for the thread and gives the file its exact size. The caller then
  // syncs and closes the file.
  Status Finish();
  uint64_t size() const { return size_; }
  bool direct() const { return direct_; }

 private:
  struct Block {
    char* data = nullptr;
    size_t used = 0;
    uint64_t offset = 0;
  };
  Status Submit(Block* b);  // hands a block to the thread (or writes it inline when it is the last)
  Status WriteBlock(const Block& b);
  void Loop();
  Status Join();

  WritableFile* file_;
  const size_t block_bytes_;
  bool positional_ = true, direct_ = false;
  std::vector<char*> memory_;  // every staging buffer, freed by the destructor
  Block* current_ = nullptr;
  Block blocks_[kBlocks];
  uint64_t size_ = 0;
  Status status_;  // the caller's view; the thread's first error lands in thread_status_

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Block*> queue_;  // full, waiting for the thread
  std::vector<Block*> free_;  // written (or never used)
  Status thread_status_;
  bool stop_ = false;
  std::thread thread_;
  bool started_ = false;
};

// Reads `size` bytes at `offset` of `file` into dst and returns their crc32c (unmasked). Large
// reads are split across up to `threads` threads, each checksumming its part as it reads;
// threads are joined on every path. Errors are returned as they came from `file`; a short read is
// OutOfRange("the file ends early").
StatusOr<uint32_t> ReadAndChecksum(const RandomAccessFile& file, uint64_t offset, uint64_t size, char* dst,
                                   int threads = 0 /* 4 */);

}  // namespace dflow::bundle_io
