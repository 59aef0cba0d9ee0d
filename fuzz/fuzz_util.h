// Helpers shared by the fuzz targets: an in-memory Env (so file readers run on the fuzzer's bytes
// without touching the disk) and a little-endian reader for splitting one input into parts.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "google/protobuf/stubs/common.h"
#if GOOGLE_PROTOBUF_VERSION < 4022000
#include "google/protobuf/stubs/logging.h"
#endif
#include "base/env.h"
#include "base/status.h"
#include "tensor/tensor.h"

namespace dflow::fuzz {

class MemFile : public RandomAccessFile {
 public:
  MemFile(std::string path, std::string contents) : path_(std::move(path)), contents_(std::move(contents)) {}
  StatusOr<absl::string_view> Read(uint64_t offset, size_t n, char* scratch) const override {
    if (offset > contents_.size()) return errors::OutOfRange("read past the end of ", path_);
    size_t len = std::min<uint64_t>(n, contents_.size() - offset);
    if (len == 0 && n > 0) return errors::OutOfRange("read past the end of ", path_);  // as PosixEnv
    if (len > 0) std::memcpy(scratch, contents_.data() + offset, len);
    return absl::string_view(scratch, len);
  }
  const std::string& path() const override { return path_; }

 private:
  std::string path_, contents_;
};

// Files by exact path; everything else is NotFound. Writes go nowhere (Env's defaults would touch
// the disk, and no reader the targets drive writes).
class MemEnv : public Env {
 public:
  void Put(const std::string& path, std::string contents) { files_[path] = std::move(contents); }

  StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) const override {
    auto it = files_.find(path);
    if (it == files_.end()) return errors::NotFound(path, " not found");
    return std::unique_ptr<RandomAccessFile>(new MemFile(path, it->second));
  }
  StatusOr<uint64_t> FileSize(const std::string& path) const override {
    auto it = files_.find(path);
    if (it == files_.end()) return errors::NotFound(path, " not found");
    return static_cast<uint64_t>(it->second.size());
  }
  bool FileExists(const std::string& path) const override { return files_.count(path) > 0; }
  StatusOr<std::string> ReadFile(const std::string& path, int64_t max_bytes) const override {
    auto it = files_.find(path);
    if (it == files_.end()) return errors::NotFound(path, " not found");
    if (static_cast<int64_t>(it->second.size()) > max_bytes) return errors::ResourceExhausted(path, " too large");
    return it->second;
  }

 private:
  std::map<std::string, std::string> files_;
};

// Splits `in` at its head: a 4-byte little-endian length n, then n bytes (the first part; clamped
// to what is there) and the rest (the second part). Inputs under 4 bytes are all first part.
inline std::pair<absl::string_view, absl::string_view> SplitLengthPrefixed(absl::string_view in) {
  if (in.size() < 4) return {in, absl::string_view()};
  uint32_t n = static_cast<uint8_t>(in[0]) | static_cast<uint32_t>(static_cast<uint8_t>(in[1])) << 8 |
               static_cast<uint32_t>(static_cast<uint8_t>(in[2])) << 16 |
               static_cast<uint32_t>(static_cast<uint8_t>(in[3])) << 24;
  in.remove_prefix(4);
  if (n > in.size()) n = static_cast<uint32_t>(in.size());
  return {in.substr(0, n), in.substr(n)};
}

// Protobuf logs every string field with invalid UTF-8 it parses; under a fuzzer that is megabytes
// of noise. Call once (a static initializer in each target that parses protos).
inline bool QuietProtobuf() {
#if GOOGLE_PROTOBUF_VERSION < 4022000
  if (std::getenv("FUZZ_VERBOSE") == nullptr) google::protobuf::SetLogHandler(nullptr);
#endif
  return true;
}

// With FUZZ_VERBOSE set, says how far an input got: a seed that stops at the first check does
// not exercise the parser behind it (see make_seeds.py).
inline bool Verbose() {
  static const bool v = std::getenv("FUZZ_VERBOSE") != nullptr;
  return v;
}
inline void Note(const char* step, const Status& s) {
  if (Verbose()) std::fprintf(stderr, "  %s: %s\n", step, s.ok() ? "OK" : s.ToString().c_str());
}

// A property the target checks beyond "does not crash": a violation is a bug, reported as a
// crash so the fuzzer keeps the input.
#define FUZZ_CHECK(cond)                                                                    \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "%s:%d: fuzz property failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                         \
    }                                                                                       \
  } while (0)

}  // namespace dflow::fuzz
