// FaultInjectionEnv: an Env whose file operations fail on demand, for tests of crash safety.
// It counts every mutating operation (create, append, sync, close, rename, delete, directory
// sync) and fails the one numbered `fail_at` (1-based; 0 never fails) with Unavailable, as a
// full disk or an I/O error would; with `stop_after_failure` every later one fails too, as if the
// process had died there. Header-only; for tests. Thread-safe.
//
// ScopedDefaultEnv makes Env::Default() return such an Env while it lives, for code that takes
// no Env* (the checkpoint kernels write through Env::Default()).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "base/env.h"

namespace dflow {

class FaultInjectionEnv : public Env {
 public:
  explicit FaultInjectionEnv(int64_t fail_at = 0, bool stop_after_failure = true)
      : fail_at_(fail_at), stop_after_failure_(stop_after_failure) {}

  int64_t operations() const { return count_.load(); }
  bool failed() const { return failed_.load(); }

  // One mutating operation; Unavailable when it is the one chosen to fail (or after it).
  Status Tick(const char* what, const std::string& path) const {
    const int64_t n = ++count_;
    if ((fail_at_ > 0 && n == fail_at_) || (stop_after_failure_ && failed_.load())) {
      failed_ = true;
      return errors::Unavailable("injected failure of ", what, " #", n, " on ", path);
    }
    return absl::OkStatus();
  }

  StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path, bool append) const override {
    RETURN_IF_ERROR(Tick("create", path));
    ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> f, Env::NewWritableFile(path, append));
    return std::unique_ptr<WritableFile>(new File(this, std::move(f)));
  }
  Status RenameFile(const std::string& from, const std::string& to) const override {
    RETURN_IF_ERROR(Tick("rename", to));
    return Env::RenameFile(from, to);
  }
  Status DeleteFile(const std::string& path) const override {
    RETURN_IF_ERROR(Tick("delete", path));
    return Env::DeleteFile(path);
  }
  Status SyncDir(const std::string& dir) const override {
    RETURN_IF_ERROR(Tick("syncdir", dir));
    return Env::SyncDir(dir);
  }
  Status WriteFileAtomic(const std::string& path, absl::string_view contents) const override {
    RETURN_IF_ERROR(Tick("write-atomic", path));
    return Env::WriteFileAtomic(path, contents);
  }

 private:
  class File : public WritableFile {
   public:
    File(const FaultInjectionEnv* env, std::unique_ptr<WritableFile> f) : env_(env), f_(std::move(f)) {}
    Status Append(absl::string_view data) override {
      RETURN_IF_ERROR(env_->Tick("append", path()));
      return f_->Append(data);
    }
    Status Flush() override { return f_->Flush(); }
    Status Sync() override {
      RETURN_IF_ERROR(env_->Tick("sync", path()));
      return f_->Sync();
    }
    Status Close() override {
      RETURN_IF_ERROR(env_->Tick("close", path()));
      return f_->Close();
    }
    const std::string& path() const override { return f_->path(); }

   private:
    const FaultInjectionEnv* env_;
    std::unique_ptr<WritableFile> f_;
  };

  int64_t fail_at_;
  bool stop_after_failure_;
  mutable std::atomic<int64_t> count_{0};
  mutable std::atomic<bool> failed_{false};
};

// Makes Env::Default() return `env` (nullptr: the real one again) and returns the previous
// override. Defined in env.cc; ScopedDefaultEnv is its one caller.
Env* SwapDefaultEnvForTesting(Env* env);

// While it lives, Env::Default() is `env` (not owned) for every thread of the process. One at a
// time: nest them only strictly (the destructor puts back what was there).
class ScopedDefaultEnv {
 public:
  explicit ScopedDefaultEnv(Env* env) : old_(SwapDefaultEnvForTesting(env)) {}
  ~ScopedDefaultEnv() { SwapDefaultEnvForTesting(old_); }
  ScopedDefaultEnv(const ScopedDefaultEnv&) = delete;
  ScopedDefaultEnv& operator=(const ScopedDefaultEnv&) = delete;

 private:
  Env* old_;
};

}  // namespace dflow
