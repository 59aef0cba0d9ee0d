// FilePolicy: the directories under which the ops of a task may touch the file system
// (checkpoints, file datasets), and PolicyEnv, an Env that checks every path against one.
//
// A server started with --allowed_dirs=A,B sets a FilePolicy on its device; kernels that open
// paths from tensors or attrs do their file operations through `Device::file_env()`, which is
// Env::Default() when the device has no policy (in-process sessions: the user's own program)
// and a PolicyEnv otherwise.
//
// How a path is checked (CheckRead and CheckWrite apply the same rule today):
//  - an empty path, a NUL byte or any ".." component is refused (PermissionDenied for "..");
//  - a relative path is taken relative to the process's working directory;
//  - the deepest existing ancestor is resolved with realpath (every symlink followed), the
//    components that do not exist yet are appended; a dangling symlink is refused, since an
//    open with O_CREAT would create its target wherever it points;
//  - the result must be an allowed directory (resolved with realpath when the policy was made)
//    or lie under one. The resolved path is what the caller should open: it has no symlinks.
// Residual risk (see docs/SECURITY.md): someone with write access to an allowed directory on
// the server's machine (not a client of the server: no op creates symlinks) can swap a checked
// component for a symlink between the check and the open.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/env.h"
#include "base/status.h"

namespace dflow {

class FilePolicy {
 public:
  // A policy allowing `dirs` and everything under them. Each is resolved with realpath now; a
  // directory that does not exist is InvalidArgument naming it, unless `create_missing`, which
  // creates it (mkdir -p) first. A path that is not a directory is InvalidArgument. An empty
  // list gives a policy that allows nothing.
  static StatusOr<std::shared_ptr<const FilePolicy>> Create(const std::vector<std::string>& dirs,
                                                            bool create_missing = false);
  // The value of an --allowed_dirs flag: a comma-separated list; blanks around entries and empty
  // entries are dropped ("a, b,,c" -> {"a", "b", "c"}).
  static std::vector<std::string> ParseDirList(absl::string_view flag);

  // OK when the op may read `path`; sets *resolved (if given) to the path to open. Errors:
  // PermissionDenied naming `path` and the allowed directories; InvalidArgument for an empty
  // path or one with a NUL byte; the errno of a failing realpath otherwise.
  Status CheckRead(absl::string_view path, std::string* resolved = nullptr) const;
  // The same for a path the op writes, creates, renames or deletes (it need not exist).
  Status CheckWrite(absl::string_view path, std::string* resolved = nullptr) const;

  // The directories as given, and as resolved.
  const std::vector<std::string>& dirs() const { return dirs_; }
  const std::vector<std::string>& resolved_dirs() const { return resolved_; }
  // "--allowed_dirs=/tmp/ckpt,/data", as errors name the policy.
  std::string DebugString() const;

 private:
  FilePolicy(std::vector<std::string> dirs, std::vector<std::string> resolved)
      : dirs_(std::move(dirs)), resolved_(std::move(resolved)) {}
  Status Check(absl::string_view path, std::string* resolved) const;
  bool IsAllowedRoot(const std::string& resolved) const;
  friend class PolicyEnv;

  std::vector<std::string> dirs_;
  std::vector<std::string> resolved_;
};

// An Env whose every file operation is checked against a policy and then done by the base Env
// on the resolved path. Also refuses to delete or rename an allowed directory itself.
// FileExists and IsDirectory answer false for a path the policy refuses. A null policy checks
// nothing and passes every call through unchanged. A null `base` is Env::Default() at the time
// of each call (so that a test's ScopedDefaultEnv is seen by kernels).
class PolicyEnv : public Env {
 public:
  explicit PolicyEnv(std::shared_ptr<const FilePolicy> policy, Env* base = nullptr)
      : policy_(std::move(policy)), base_(base) {}
  const FilePolicy* policy() const { return policy_.get(); }

  int64_t NowMicros() const override { return base()->NowMicros(); }
  int64_t NowMonotonicMicros() const override { return base()->NowMonotonicMicros(); }
  void SleepForMicros(int64_t micros) const override { base()->SleepForMicros(micros); }
  StatusOr<std::string> ReadFile(const std::string& path, int64_t max_bytes) const override;
  Status WriteFileAtomic(const std::string& path, absl::string_view contents, int mode = 0644) const override;
  bool FileExists(const std::string& path) const override;
  StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path, bool append) const override;
  StatusOr<std::unique_ptr<WritableFile>> NewExclusiveFile(const std::string& path, int mode) const override;
  StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(const std::string& path) const override;
  StatusOr<uint64_t> FileSize(const std::string& path) const override;
  Status RenameFile(const std::string& from, const std::string& to) const override;
  Status DeleteFile(const std::string& path) const override;
  Status DeleteDir(const std::string& path) const override;
  Status CreateDirs(const std::string& path) const override;
  bool IsDirectory(const std::string& path) const override;
  StatusOr<std::vector<std::string>> GetChildren(const std::string& dir) const override;
  Status SyncDir(const std::string& dir) const override;
  std::string HostName() const override { return base()->HostName(); }

 private:
  Env* base() const { return base_ != nullptr ? base_ : Env::Default(); }
  // The policy's CheckRead/CheckWrite into *resolved; with no policy, *resolved = path.
  Status Read(const std::string& path, std::string* resolved) const;
  Status Write(const std::string& path, std::string* resolved) const;
  Status CheckNotRoot(const std::string& path, const std::string& resolved) const;

  std::shared_ptr<const FilePolicy> policy_;
  Env* base_;
};

// The Env for ops under `policy` (null: unrestricted): a PolicyEnv over `base` (null: the
// current Env::Default()).
std::shared_ptr<Env> MakeFileEnv(std::shared_ptr<const FilePolicy> policy, Env* base = nullptr);

}  // namespace dflow
