// TempFile: the "write a temporary, then rename it over the target" step that every atomic file
// write shares (Env::WriteFileAtomic, tensor bundles, credentials). The temporary lies beside the
// target (same directory, so the rename is atomic) under a name no other writer uses; it is
// created with Env::NewExclusiveFile (O_EXCL | O_NOFOLLOW, exactly `mode`). Commit makes the
// contents durable and puts them in place; a TempFile destroyed without a successful Commit
// deletes its temporary, so a failed write leaves the target as it was. Every step goes through
// the Env's virtuals, so a test Env sees (and can fail) each of them.
#pragma once

#include <memory>
#include <string>

#include "absl/strings/string_view.h"

#include "base/env.h"

namespace dflow {

class TempFile {
 public:
  // A new temporary for `path`, named "<path><infix><16 random hex digits>", opened for writing.
  // (Tensor bundles use TensorFlow's infix ".tempstate", which their cleanup recognizes.)
  static StatusOr<TempFile> Create(const Env* env, std::string path, int mode = 0644,
                                   absl::string_view infix = ".tmp.");

  TempFile(TempFile&& other) noexcept;
  TempFile& operator=(TempFile&& other) noexcept;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile();

  // Where to write the contents (null after Commit or Abandon).
  WritableFile* file() const { return file_.get(); }
  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_; }

  // Sync, Close, RenameFile(temp_path, path), then (with `sync_dir`) SyncDir of path's
  // directory. When a step up to the rename fails the temporary is deleted and `path` is
  // unchanged; when only the SyncDir fails, `path` has the new contents and that error is
  // returned. A caller that renames several files into one directory may sync it once itself.
  Status Commit(bool sync_dir = true);
  // Closes and deletes the temporary (errors ignored: it is garbage either way).
  void Abandon();

 private:
  TempFile(const Env* env, std::string path, std::string temp, std::unique_ptr<WritableFile> file)
      : env_(env), path_(std::move(path)), temp_(std::move(temp)), file_(std::move(file)) {}

  const Env* env_ = nullptr;
  std::string path_, temp_;
  std::unique_ptr<WritableFile> file_;
};

// The step every atomic write ends with, for a file written at `temp` that is not a TempFile
// (a bundle's data file): Sync, Close, RenameFile(temp, path). When one fails, the temporary is
// deleted and `path` is unchanged. The directory is not synced.
Status SyncCloseAndRename(const Env* env, WritableFile* file, const std::string& temp, const std::string& path);

// A random 16-hex-digit name part for temporaries (thread-safe).
std::string RandomTempSuffix();

}  // namespace dflow
