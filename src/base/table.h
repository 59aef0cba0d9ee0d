// Sorted string tables in the LevelDB format, as TensorFlow writes the `.index` file of a V2
// checkpoint.
//
// A table is a sequence of blocks followed by a 48-byte footer:
//   data blocks     entries sorted by key; each entry is varint32 shared (bytes of the key it
//                   has in common with the previous key), varint32 unshared, varint32 value
//                   length, the unshared key bytes, the value; every `restart_interval`
//                   entries a restart point stores its whole key; the block ends with the
//                   fixed32 offsets of the restart points and their fixed32 count
//   block trailer   after every block: 1 byte compression type (0 none, 1 Snappy) and the
//                   fixed32 masked CRC32C of the block's bytes and that type byte
//   metaindex block empty (no filters)
//   index block     one entry per data block: a key >= the block's last key and < the next
//                   block's first key, and the varint64 (offset, size) handle of the block
//   footer          the handles of the metaindex and index blocks, zero padding to 40 bytes,
//                   and the fixed64 magic number 0xdb4775248b80fb57
// All integers are little-endian.
//
// The reader trusts nothing in the file: every varint, handle, length, restart offset and
// checksum is checked, and a bad one is DataLoss naming the file and the offset, never a crash or
// an allocation beyond the file's size.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/env.h"
#include "base/status.h"

namespace dflow::table {

constexpr uint64_t kTableMagicNumber = 0xdb4775248b80fb57ull;
constexpr size_t kBlockTrailerSize = 5;
constexpr size_t kFooterSize = 48;

struct Options {
  size_t block_size = 256 << 10;  // uncompressed bytes per data block (TensorFlow's default)
  int restart_interval = 16;
};

// Writes a table to a file it does not own. Keys must be added in strictly increasing bytewise
// order (InvalidArgument otherwise). Finish writes the index and footer; it does not sync or
// close the file. Not thread-safe.
class TableBuilder {
 public:
  explicit TableBuilder(WritableFile* file, Options options = Options());
  Status Add(absl::string_view key, absl::string_view value);
  Status Finish();
  uint64_t FileSize() const { return offset_; }

 private:
  Status FlushDataBlock();
  Status WriteBlock(const std::string& contents, std::string* handle);

  WritableFile* file_;
  Options options_;
  Status status_;
  uint64_t offset_ = 0;
  // The data block being built.
  std::string block_;
  std::vector<uint32_t> restarts_{0};
  int entries_since_restart_ = 0;
  int block_entries_ = 0;
  std::string last_key_;
  bool has_key_ = false;
  // Index entries waiting for the key that follows their block (for a short separator).
  std::string pending_handle_;
  bool pending_index_ = false;
  std::vector<std::pair<std::string, std::string>> index_;
  bool finished_ = false;
};

// The whole table read into memory, verified: every (key, value) in key order. Index files are
// small (one entry per tensor), so reading them whole keeps the reader simple. `path` names the
// file in errors. A file larger than max_bytes is ResourceExhausted.
StatusOr<std::vector<std::pair<std::string, std::string>>> ReadTable(const RandomAccessFile& file, uint64_t size,
                                                                     uint64_t max_bytes = uint64_t{1} << 31);

// Reads a Snappy-compressed block (the raw format, as LevelDB stores it). DataLoss for anything
// malformed; the output is bounded by the length the data declares, which must be at most
// 32 times the input size (Snappy cannot expand more).
StatusOr<std::string> SnappyUncompress(absl::string_view in);

// Little-endian integers and varints, for this format and the tensor bundle's.
void PutFixed32(std::string* dst, uint32_t v);
void PutFixed64(std::string* dst, uint64_t v);
void PutVarint32(std::string* dst, uint32_t v);
void PutVarint64(std::string* dst, uint64_t v);
uint32_t DecodeFixed32(const char* p);
uint64_t DecodeFixed64(const char* p);
// Parses a varint at the start of *in and drops it; false (and *in unchanged) when it is cut off
// or longer than the type allows.
bool GetVarint32(absl::string_view* in, uint32_t* v);
bool GetVarint64(absl::string_view* in, uint64_t* v);

}  // namespace dflow::table
