// FaultInjectionEnv: an Env whose file operations fail on demand, for tests of crash safety.
// It counts every mutating operation (create, append or positional write, truncate, sync, close,
// rename, delete, directory sync) and fails the one numbered `fail_at` (1-based; 0 never fails) with Unavailable, as a
// full disk or an I/O error would; with `stop_after_failure` every later one fails too, as if the
// process had died there. Header-only; for tests. Thread-safe.
//
// ScopedDefaultEnv makes Env::Default() return such an Env while it lives, for code that takes
// no Env* (the checkpoint kernels write through Env::Default()). TestClockEnv below fakes the
// clocks instead.
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
  StatusOr<std::unique_ptr<WritableFile>> NewExclusiveFile(const std::string& path, int mode) const override {
    RETURN_IF_ERROR(Tick("create", path));
    ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> f, Env::NewExclusiveFile(path, mode));
    return std::unique_ptr<WritableFile>(new File(this, std::move(f)));
  }
  // WriteFileAtomic is Env's: its create, append, sync, close, rename and directory sync are each
  // one operation above.

 private:
  class File : public WritableFile {
   public:
    File(const FaultInjectionEnv* env, std::unique_ptr<WritableFile> f) : env_(env), f_(std::move(f)) {}
    Status Append(absl::string_view data) override {
      RETURN_IF_ERROR(env_->Tick("append", path()));
      return f_->Append(data);
    }
    // Positional and direct writes (the checkpoint writer's) count as appends do; a file the
    // real Env cannot write that way answers as it would.
    Status WriteAt(uint64_t offset, absl::string_view data) override {
      if (data.empty()) return f_->WriteAt(offset, data);  // a probe, not a write
      RETURN_IF_ERROR(env_->Tick("write", path()));
      return f_->WriteAt(offset, data);
    }
    Status EnableDirectWrites() override { return f_->EnableDirectWrites(); }
    Status Truncate(uint64_t size) override {
      RETURN_IF_ERROR(env_->Tick("truncate", path()));
      return f_->Truncate(size);
    }
    Status StartWriteback(uint64_t offset, uint64_t size) override { return f_->StartWriteback(offset, size); }
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

// An Env whose clocks a test moves, for code that measures time through Env. The wall clock
// (NowMicros) is the real one plus an offset that JumpWallClock moves and that also moves by
// `wall_drift_per_call` at every reading (a clock that jumps while a step runs). The monotonic
// clock is the real one plus an offset that only AdvanceMonotonic (or, with `fake_sleep`,
// SleepForMicros: it then returns at once) moves forward. Files are the real Env's.
class TestClockEnv : public Env {
 public:
  explicit TestClockEnv(int64_t wall_drift_per_call = 0, bool fake_sleep = false)
      : wall_drift_per_call_(wall_drift_per_call), fake_sleep_(fake_sleep) {}

  int64_t NowMicros() const override {
    return Env::NowMicros() + wall_offset_.fetch_add(wall_drift_per_call_) + wall_drift_per_call_;
  }
  int64_t NowMonotonicMicros() const override { return Env::NowMonotonicMicros() + monotonic_offset_.load(); }
  void SleepForMicros(int64_t micros) const override {
    sleeps_.fetch_add(1);
    if (!fake_sleep_) return Env::SleepForMicros(micros);
    if (micros > 0) monotonic_offset_.fetch_add(micros);
  }

  void JumpWallClock(int64_t micros) { wall_offset_.fetch_add(micros); }
  void AdvanceMonotonic(int64_t micros) {
    if (micros > 0) monotonic_offset_.fetch_add(micros);
  }
  int64_t sleeps() const { return sleeps_.load(); }

 private:
  const int64_t wall_drift_per_call_;
  const bool fake_sleep_;
  mutable std::atomic<int64_t> wall_offset_{0}, monotonic_offset_{0}, sleeps_{0};
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
