// Env: files and the clock, behind one interface so tests can inject faults (subclass Env and
// override what should fail; code that writes files takes an Env*).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "base/status.h"

namespace dflow {

// A file opened for writing. Appends are buffered by the OS; Sync makes them durable. Not
// thread-safe. The destructor closes the file if Close was not called (ignoring errors).
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status Append(absl::string_view data) = 0;
  virtual Status Flush() = 0;  // hands buffered data to the OS
  virtual Status Sync() = 0;   // fsync: the data is on disk when it returns OK
  virtual Status Close() = 0;
  virtual const std::string& path() const = 0;
};

// A file opened for reads at offsets. Thread-safe.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  // Reads up to n bytes at offset into scratch; returns the bytes read, fewer only at the end of
  // the file (OutOfRange when offset is past the end).
  virtual StatusOr<absl::string_view> Read(uint64_t offset, size_t n, char* scratch) const = 0;
  virtual const std::string& path() const = 0;
};

class Env {
 public:
  virtual ~Env() = default;
  static Env* Default();

  virtual int64_t NowMicros() const;
  // Reads a whole file; NotFound when missing, ResourceExhausted past `max_bytes`.
  virtual StatusOr<std::string> ReadFile(const std::string& path,
                                         int64_t max_bytes = int64_t{1} << 32) const;
  // Writes atomically: a temporary file beside `path`, fsync, then rename.
  virtual Status WriteFileAtomic(const std::string& path, absl::string_view contents) const;
  virtual bool FileExists(const std::string& path) const;

  // Creates or truncates `path` (append = false) or opens it for appending.
  virtual StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path,
                                                                  bool append = false) const;
  virtual StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) const;
  // Size in bytes of a regular file; NotFound when missing.
  virtual StatusOr<uint64_t> FileSize(const std::string& path) const;
  // rename(2): atomic replacement of `to` on one file system.
  virtual Status RenameFile(const std::string& from, const std::string& to) const;
  // NotFound when missing.
  virtual Status DeleteFile(const std::string& path) const;
  // rmdir: removes an empty directory. NotFound when missing; an error when not empty.
  virtual Status DeleteDir(const std::string& path) const;
  // mkdir -p. OK when it exists already as a directory.
  virtual Status CreateDirs(const std::string& path) const;
  virtual bool IsDirectory(const std::string& path) const;
  // The names (not paths) of a directory's entries, without "." and "..", sorted.
  virtual StatusOr<std::vector<std::string>> GetChildren(const std::string& dir) const;
  // fsync of a directory, so that renames and creations in it are durable.
  virtual Status SyncDir(const std::string& dir) const;
  // The machine's host name ("localhost" when it cannot be read).
  virtual std::string HostName() const;
};

// "dir/name" (no doubled slash); the directory part of a path ("." when it has none); the last
// component.
std::string JoinPath(absl::string_view dir, absl::string_view name);
std::string DirName(absl::string_view path);
std::string BaseName(absl::string_view path);

}  // namespace dflow
