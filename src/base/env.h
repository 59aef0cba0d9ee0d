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

  // Optional, for large files written by several threads (a file that does not offer them answers
  // Unimplemented, and callers fall back to Append):
  //  - WriteAt: writes all of `data` at `offset` (pwrite); thread-safe for disjoint ranges; not
  //    to be mixed with Append.
  //  - EnableDirectWrites: later WriteAt calls bypass the page cache (O_DIRECT); their offset,
  //    size and buffer address must then be multiples of kDirectWriteAlignment. Unimplemented
  //    when the file system cannot (tmpfs). Sync is still needed for durability.
  //  - Truncate: sets the file's size (ftruncate), e.g. after a padded last direct write.
  //  - StartWriteback: starts writing a written range to disk without waiting
  //    (sync_file_range(SYNC_FILE_RANGE_WRITE)), so that a later Sync has less left to do; it
  //    makes nothing durable. The default does nothing.
  static constexpr size_t kDirectWriteAlignment = 4096;
  virtual Status WriteAt(uint64_t offset, absl::string_view data);
  virtual Status EnableDirectWrites();
  virtual Status Truncate(uint64_t size);
  virtual Status StartWriteback(uint64_t offset, uint64_t size);
};

// A file opened for reads at offsets. Thread-safe.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  // Reads up to n bytes at offset into scratch; returns the bytes read, fewer only at the end of
  // the file (OutOfRange when offset is past the end).
  virtual StatusOr<absl::string_view> Read(uint64_t offset, size_t n, char* scratch) const = 0;
  virtual const std::string& path() const = 0;

  // Optional, for large reads (thread-safe like Read):
  //  - InPageCache: whether every page of the range is in the page cache (mincore); the default,
  //    true, means "read as usual".
  //  - ReadDirect: reads bypassing the page cache (O_DIRECT), into scratch; offset, n and scratch
  //    must be multiples of kDirectReadAlignment; returns the bytes read, fewer only at the end of
  //    the file. Unimplemented when not offered.
  static constexpr size_t kDirectReadAlignment = 4096;
  virtual bool InPageCache(uint64_t offset, size_t n) const;
  virtual StatusOr<size_t> ReadDirect(uint64_t offset, size_t n, char* scratch) const;
};

class Env {
 public:
  virtual ~Env() = default;
  static Env* Default();

  // The wall clock (system_clock), microseconds since the Unix epoch: for timestamps (events,
  // stats, file names) only. It can jump (NTP, an operator); never measure a timeout with it.
  virtual int64_t NowMicros() const;
  // A clock that never goes back (steady_clock), for deadlines and timeouts. Its epoch is
  // arbitrary and per process: never store it or send it to another process (send the time
  // left instead).
  virtual int64_t NowMonotonicMicros() const;
  // Sleeps for `micros` on the monotonic clock (returns at once when <= 0). Blocking waits that
  // can be woken should wait on a condition with a deadline instead.
  virtual void SleepForMicros(int64_t micros) const;

  // Reads a whole file; NotFound when missing, ResourceExhausted past `max_bytes`.
  virtual StatusOr<std::string> ReadFile(const std::string& path, int64_t max_bytes = int64_t{1} << 32) const;
  // Writes atomically: readers (and a crash) see either the old contents of `path` or the new
  // ones, never a mix. A temporary beside `path` created with NewExclusiveFile(mode), the
  // contents, Sync, Close, RenameFile over `path`, SyncDir of its directory -- all through this
  // Env's virtuals, so a test Env that fails one of them fails the write. When a step up to the
  // rename fails, `path` is unchanged and the temporary is deleted; when only the SyncDir fails,
  // `path` has the new contents and that error is returned (the rename may not survive a power
  // loss). `path` ends up with exactly the permission bits `mode` (0600 for secrets).
  virtual Status WriteFileAtomic(const std::string& path, absl::string_view contents, int mode = 0644) const;
  virtual bool FileExists(const std::string& path) const;

  // Creates or truncates `path` (append = false) or opens it for appending.
  virtual StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path, bool append = false) const;
  // Creates `path`, which must not exist yet: AlreadyExists when it does, also as a symbolic link
  // (O_EXCL | O_NOFOLLOW: a link planted there is never followed). The file has exactly the
  // permission bits `mode` from its creation on, whatever the umask.
  virtual StatusOr<std::unique_ptr<WritableFile>> NewExclusiveFile(const std::string& path, int mode) const;
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
