#include "base/env.h"

#include "base/temp_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <dirent.h>
#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"

namespace dflow {
namespace {

// Set by ScopedDefaultEnv (base/fault_injection_env.h) in tests; null otherwise.
std::atomic<Env*> default_override{nullptr};

}  // namespace

Env* Env::Default() {
  static Env* env = new Env;
  Env* o = default_override.load(std::memory_order_acquire);
  return o != nullptr ? o : env;
}

Env* SwapDefaultEnvForTesting(Env* env) { return default_override.exchange(env, std::memory_order_acq_rel); }

int64_t Env::NowMicros() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t Env::NowMonotonicMicros() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Env::SleepForMicros(int64_t micros) const {
  if (micros > 0) std::this_thread::sleep_for(std::chrono::microseconds(micros));
}

Status WritableFile::WriteAt(uint64_t, absl::string_view) {
  return errors::Unimplemented("WriteAt is not offered by ", path());
}
Status WritableFile::EnableDirectWrites() { return errors::Unimplemented("O_DIRECT is not offered by ", path()); }
Status WritableFile::Truncate(uint64_t) { return errors::Unimplemented("Truncate is not offered by ", path()); }
Status WritableFile::StartWriteback(uint64_t, uint64_t) { return absl::OkStatus(); }
bool RandomAccessFile::InPageCache(uint64_t, size_t) const { return true; }
StatusOr<size_t> RandomAccessFile::ReadDirect(uint64_t, size_t, char*) const {
  return errors::Unimplemented("O_DIRECT reads are not offered by ", path());
}

StatusOr<std::string> Env::ReadFile(const std::string& path, int64_t max_bytes) const {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT) return errors::NotFound("File not found: ", path);
    return errors::InvalidArgument("Cannot open ", path, ": ", std::strerror(e));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return errors::InvalidArgument("Not a regular file: ", path);
  }
  if (st.st_size > max_bytes) {
    ::close(fd);
    return errors::ResourceExhausted("File ", path, " is ", st.st_size, " bytes, more than the limit of ", max_bytes);
  }
  std::string out;
  out.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(done);
  return out;
}

Status Env::WriteFileAtomic(const std::string& path, absl::string_view contents, int mode) const {
  ASSIGN_OR_RETURN(TempFile tmp, TempFile::Create(this, path, mode));
  RETURN_IF_ERROR(tmp.file()->Append(contents));
  return tmp.Commit();
}

bool Env::FileExists(const std::string& path) const { return ::access(path.c_str(), F_OK) == 0; }

namespace {

Status IoError(absl::string_view what, const std::string& path, int e) {
  std::string msg = absl::StrCat(what, " ", path, ": ", std::strerror(e));
  if (e == ENOENT) return absl::NotFoundError(msg);
  if (e == ENOSPC || e == EDQUOT) return absl::ResourceExhaustedError(msg);
  if (e == EACCES || e == EPERM) return absl::PermissionDeniedError(msg);
  return absl::UnavailableError(msg);
}

class PosixWritableFile : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }
  Status Append(absl::string_view data) override {
    if (fd_ < 0) return errors::FailedPrecondition("Append to closed file ", path_);
    while (!data.empty()) {
      ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return IoError("Cannot write", path_, errno);
      data.remove_prefix(static_cast<size_t>(n));
    }
    return absl::OkStatus();
  }
  Status Flush() override { return absl::OkStatus(); }  // unbuffered: every Append is a write(2)
  Status Sync() override {
    if (fd_ < 0) return errors::FailedPrecondition("Sync of closed file ", path_);
    if (::fdatasync(fd_) != 0) return IoError("Cannot sync", path_, errno);
    return absl::OkStatus();
  }
  Status Close() override {
    if (fd_ < 0) return absl::OkStatus();
    int r = ::close(fd_);
    fd_ = -1;
    if (r != 0) return IoError("Cannot close", path_, errno);
    return absl::OkStatus();
  }
  const std::string& path() const override { return path_; }
  Status WriteAt(uint64_t offset, absl::string_view data) override {
    if (fd_ < 0) return errors::FailedPrecondition("Write to closed file ", path_);
    while (!data.empty()) {
      ssize_t n = ::pwrite(fd_, data.data(), data.size(), static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EINVAL && direct_) {
        // A file system that took O_DIRECT but not this write (its alignment rules are stricter,
        // or it only pretends to support it): the rest goes through the page cache.
        const int flags = ::fcntl(fd_, F_GETFL);
        if (flags >= 0 && ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT) == 0) {
          direct_ = false;
          continue;
        }
      }
      if (n < 0) return IoError("Cannot write", path_, errno);
      if (n == 0) return errors::Internal("Cannot write ", path_, ": pwrite wrote nothing at offset ", offset);
      data.remove_prefix(static_cast<size_t>(n));
      offset += static_cast<uint64_t>(n);
    }
    return absl::OkStatus();
  }
  Status EnableDirectWrites() override {
    if (fd_ < 0) return errors::FailedPrecondition("O_DIRECT on closed file ", path_);
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags < 0 || ::fcntl(fd_, F_SETFL, flags | O_DIRECT) != 0) {
      return errors::Unimplemented("O_DIRECT is not available for ", path_, ": ", std::strerror(errno));
    }
    direct_ = true;
    return absl::OkStatus();
  }
  Status StartWriteback(uint64_t offset, uint64_t size) override {
    if (fd_ < 0) return errors::FailedPrecondition("Writeback of closed file ", path_);
    if (::sync_file_range(fd_, static_cast<off_t>(offset), static_cast<off_t>(size), SYNC_FILE_RANGE_WRITE) != 0) {
      return IoError("Cannot start the writeback of", path_, errno);
    }
    return absl::OkStatus();
  }
  Status Truncate(uint64_t size) override {
    if (fd_ < 0) return errors::FailedPrecondition("Truncate of closed file ", path_);
    while (::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
      if (errno != EINTR) return IoError("Cannot truncate", path_, errno);
    }
    return absl::OkStatus();
  }

 private:
  std::string path_;
  int fd_;
  bool direct_ = false;  // O_DIRECT is on
};

class PosixRandomAccessFile : public RandomAccessFile {
 public:
  PosixRandomAccessFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixRandomAccessFile() override {
    ::close(fd_);
    if (direct_fd_ >= 0) ::close(direct_fd_);
  }
  StatusOr<absl::string_view> Read(uint64_t offset, size_t n, char* scratch) const override {
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd_, scratch + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return IoError("Cannot read", path_, errno);
      if (r == 0) break;
      done += static_cast<size_t>(r);
    }
    if (done == 0 && n > 0) {
      return errors::OutOfRange("Read past the end of ", path_, " at offset ", offset);
    }
    return absl::string_view(scratch, done);
  }
  const std::string& path() const override { return path_; }
  bool InPageCache(uint64_t offset, size_t n) const override {
    if (n == 0) return true;
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t begin = offset / page * page;
    const size_t len = static_cast<size_t>(offset + n - begin);
    void* m = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd_, static_cast<off_t>(begin));
    if (m == MAP_FAILED) return true;
    std::vector<unsigned char> vec((len + page - 1) / page);
    const bool known = ::mincore(m, len, vec.data()) == 0;
    ::munmap(m, len);
    return !known || std::all_of(vec.begin(), vec.end(), [](unsigned char c) { return (c & 1) != 0; });
  }
  StatusOr<size_t> ReadDirect(uint64_t offset, size_t n, char* scratch) const override {
    std::call_once(direct_once_, [&] {
      // The same open file, not the path (which may have been renamed since).
      direct_fd_ = ::open(absl::StrCat("/proc/self/fd/", fd_).c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    });
    if (direct_fd_ < 0) return errors::Unimplemented("O_DIRECT reads are not available for ", path_);
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(direct_fd_, scratch + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return IoError("Cannot read", path_, errno);
      if (r == 0) break;
      done += static_cast<size_t>(r);
      if (done % kDirectReadAlignment != 0) break;  // the end of the file
    }
    return done;
  }

 private:
  std::string path_;
  int fd_;
  mutable std::once_flag direct_once_;
  mutable int direct_fd_ = -1;
};

}  // namespace

StatusOr<std::unique_ptr<WritableFile>> Env::NewWritableFile(const std::string& path, bool append) const {
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return IoError("Cannot open for writing", path, errno);
  return std::unique_ptr<WritableFile>(new PosixWritableFile(path, fd));
}

StatusOr<std::unique_ptr<WritableFile>> Env::NewExclusiveFile(const std::string& path, int mode) const {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 07777);
  if (fd < 0) {
    int e = errno;
    if (e == EEXIST) return errors::AlreadyExists("Cannot create ", path, ": it exists");
    return IoError("Cannot create", path, e);
  }
  // The umask may have narrowed the bits open() applied; a wider umask never widens them, so
  // the file was never more open than `mode` in between.
  if (::fchmod(fd, static_cast<mode_t>(mode & 07777)) != 0) {
    int e = errno;
    ::close(fd);
    ::unlink(path.c_str());
    return IoError("Cannot set the permissions of", path, e);
  }
  return std::unique_ptr<WritableFile>(new PosixWritableFile(path, fd));
}

StatusOr<std::unique_ptr<RandomAccessFile>> Env::NewRandomAccessFile(const std::string& path) const {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("Cannot open", path, errno);
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return errors::InvalidArgument("Not a regular file: ", path);
  }
  return std::unique_ptr<RandomAccessFile>(new PosixRandomAccessFile(path, fd));
}

StatusOr<uint64_t> Env::FileSize(const std::string& path) const {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return IoError("Cannot stat", path, errno);
  if (!S_ISREG(st.st_mode)) return errors::InvalidArgument("Not a regular file: ", path);
  return static_cast<uint64_t>(st.st_size);
}

Status Env::RenameFile(const std::string& from, const std::string& to) const {
  if (::rename(from.c_str(), to.c_str()) != 0) return IoError(absl::StrCat("Cannot rename to ", to, ":"), from, errno);
  return absl::OkStatus();
}

Status Env::DeleteFile(const std::string& path) const {
  if (::unlink(path.c_str()) != 0) return IoError("Cannot delete", path, errno);
  return absl::OkStatus();
}

Status Env::DeleteDir(const std::string& path) const {
  if (::rmdir(path.c_str()) != 0) return IoError("Cannot delete directory", path, errno);
  return absl::OkStatus();
}

bool Env::IsDirectory(const std::string& path) const {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Status Env::CreateDirs(const std::string& path) const {
  if (path.empty() || IsDirectory(path)) return absl::OkStatus();
  std::string parent = DirName(path);
  if (parent != path && parent != "." && parent != "/") RETURN_IF_ERROR(CreateDirs(parent));
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) return IoError("Cannot create directory", path, errno);
  if (!IsDirectory(path)) return errors::FailedPrecondition("Not a directory: ", path);
  return absl::OkStatus();
}

StatusOr<std::vector<std::string>> Env::GetChildren(const std::string& dir) const {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return IoError("Cannot list directory", dir, errno);
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

Status Env::SyncDir(const std::string& dir) const {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IoError("Cannot open directory", dir, errno);
  int r = ::fsync(fd);
  int e = errno;
  ::close(fd);
  if (r != 0) return IoError("Cannot sync directory", dir, e);
  return absl::OkStatus();
}

std::string Env::HostName() const {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == 0) return "localhost";
  return buf;
}

std::string JoinPath(absl::string_view dir, absl::string_view name) {
  if (dir.empty()) return std::string(name);
  if (name.empty()) return std::string(dir);
  if (dir.back() == '/') dir.remove_suffix(1);
  if (name.front() == '/') name.remove_prefix(1);
  return absl::StrCat(dir, "/", name);
}

std::string DirName(absl::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

std::string BaseName(absl::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == absl::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace dflow
