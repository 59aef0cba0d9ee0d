#include "base/temp_file.h"

#include <unistd.h>

#include <mutex>
#include <random>

#include "absl/strings/str_cat.h"

namespace dflow {
namespace {

uint64_t RandomId() {
  static std::mutex mu;
  static std::mt19937_64 gen(std::random_device{}() ^ (static_cast<uint64_t>(::getpid()) << 32));
  std::lock_guard<std::mutex> l(mu);
  return gen();
}

}  // namespace

std::string RandomTempSuffix() { return absl::StrCat(absl::Hex(RandomId(), absl::kZeroPad16)); }

Status SyncCloseAndRename(const Env* env, WritableFile* file, const std::string& temp, const std::string& path) {
  Status s = file->Sync();
  if (s.ok()) s = file->Close();
  if (s.ok()) s = env->RenameFile(temp, path);
  if (!s.ok()) {
    file->Close().IgnoreError();
    env->DeleteFile(temp).IgnoreError();
  }
  return s;
}

StatusOr<TempFile> TempFile::Create(const Env* env, std::string path, int mode, absl::string_view infix) {
  // A clash with another writer's temporary (or a planted file or link) is AlreadyExists from
  // NewExclusiveFile: pick another name.
  Status last;
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::string temp = absl::StrCat(path, infix, RandomTempSuffix());
    StatusOr<std::unique_ptr<WritableFile>> f = env->NewExclusiveFile(temp, mode);
    if (f.ok()) return TempFile(env, std::move(path), std::move(temp), std::move(*f));
    last = f.status();
    if (!absl::IsAlreadyExists(last)) break;
  }
  return errors::Unavailable("Cannot create a temporary file beside ", path, ": ", last.message());
}

TempFile::TempFile(TempFile&& other) noexcept
    : env_(other.env_), path_(std::move(other.path_)), temp_(std::move(other.temp_)), file_(std::move(other.file_)) {
  other.file_.reset();
}

TempFile& TempFile::operator=(TempFile&& other) noexcept {
  if (this != &other) {
    Abandon();
    env_ = other.env_;
    path_ = std::move(other.path_);
    temp_ = std::move(other.temp_);
    file_ = std::move(other.file_);
    other.file_.reset();
  }
  return *this;
}

TempFile::~TempFile() { Abandon(); }

void TempFile::Abandon() {
  if (file_ == nullptr) return;
  file_->Close().IgnoreError();
  file_.reset();
  env_->DeleteFile(temp_).IgnoreError();
}

Status TempFile::Commit(bool sync_dir) {
  if (file_ == nullptr) return errors::FailedPrecondition("The temporary for ", path_, " is already closed");
  std::unique_ptr<WritableFile> f = std::move(file_);
  RETURN_IF_ERROR(SyncCloseAndRename(env_, f.get(), temp_, path_));
  return sync_dir ? env_->SyncDir(DirName(path_)) : absl::OkStatus();
}

}  // namespace dflow
