#include "framework/file_policy.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace dflow {
namespace {

// realpath(3) into a std::string; the errno on failure.
int RealPath(const std::string& path, std::string* out) {
  char* r = ::realpath(path.c_str(), nullptr);
  if (r == nullptr) return errno;
  *out = r;
  ::free(r);
  return 0;
}

std::string CurrentDir() {
  char buf[PATH_MAX];
  if (::getcwd(buf, sizeof(buf)) == nullptr) return "/";
  return buf;
}

// "/" + the components of `parts` (none: "/").
std::string JoinComponents(const std::vector<std::string>& parts, size_t n) {
  if (n == 0) return "/";
  std::string out;
  for (size_t i = 0; i < n; ++i) absl::StrAppend(&out, "/", parts[i]);
  return out;
}

bool IsUnder(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path.size() >= root.size() && path.compare(0, root.size(), root) == 0 &&
         (path.size() == root.size() || path[root.size()] == '/');
}

}  // namespace

StatusOr<std::shared_ptr<const FilePolicy>> FilePolicy::Create(const std::vector<std::string>& dirs,
                                                               bool create_missing) {
  std::vector<std::string> resolved;
  for (const std::string& d : dirs) {
    if (d.empty() || d.find('\0') != std::string::npos) {
      return errors::InvalidArgument("allowed directory '", d, "' is empty or has a NUL byte");
    }
    if (create_missing) {
      Status s = Env::Default()->CreateDirs(d);
      if (!s.ok()) return errors::InvalidArgument("cannot create allowed directory '", d, "': ", s.message());
    }
    std::string r;
    if (int e = RealPath(d, &r); e != 0) {
      return errors::InvalidArgument("allowed directory '", d, "' cannot be resolved: ", std::strerror(e));
    }
    struct stat st;
    if (::stat(r.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return errors::InvalidArgument("allowed directory '", d, "' is not a directory");
    }
    resolved.push_back(std::move(r));
  }
  return std::shared_ptr<const FilePolicy>(new FilePolicy(dirs, std::move(resolved)));
}

std::vector<std::string> FilePolicy::ParseDirList(absl::string_view flag) {
  std::vector<std::string> out;
  for (absl::string_view part : absl::StrSplit(flag, ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (!part.empty()) out.emplace_back(part);
  }
  return out;
}

std::string FilePolicy::DebugString() const { return absl::StrCat("--allowed_dirs=", absl::StrJoin(dirs_, ",")); }

Status FilePolicy::CheckRead(absl::string_view path, std::string* resolved) const { return Check(path, resolved); }
Status FilePolicy::CheckWrite(absl::string_view path, std::string* resolved) const { return Check(path, resolved); }

bool FilePolicy::IsAllowedRoot(const std::string& resolved) const {
  for (const std::string& r : resolved_) {
    if (resolved == r) return true;
  }
  return false;
}

Status FilePolicy::Check(absl::string_view path, std::string* resolved) const {
  if (path.empty()) return errors::InvalidArgument("empty path");
  if (path.find('\0') != absl::string_view::npos) {
    return errors::InvalidArgument("path '", absl::CHexEscape(path), "' has a NUL byte");
  }
  auto denied = [&](absl::string_view why) {
    return absl::PermissionDeniedError(absl::StrCat("Path '", path, "' ", why, " (", DebugString(), ")"));
  };
  // Components of the absolute path, without "." and empty ones; ".." is refused outright.
  std::vector<std::string> parts;
  std::string abs = path[0] == '/' ? std::string(path) : absl::StrCat(CurrentDir(), "/", path);
  for (absl::string_view c : absl::StrSplit(abs, '/', absl::SkipEmpty())) {
    if (c == ".") continue;
    if (c == "..") return denied("has a '..' component, which this task may not use");
    parts.emplace_back(c);
  }
  // Resolve the deepest existing ancestor; the rest does not exist yet.
  size_t n = parts.size();
  std::string real;
  while (true) {
    const std::string prefix = JoinComponents(parts, n);
    const int e = RealPath(prefix, &real);
    if (e == 0) break;
    if (e != ENOENT && e != ENOTDIR) {
      if (e == EACCES) return denied(absl::StrCat("cannot be resolved: ", std::strerror(e)));
      return errors::InvalidArgument("Path '", path, "' cannot be resolved: ", std::strerror(e));
    }
    struct stat st;
    if (::lstat(prefix.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      return denied(absl::StrCat("leads through the dangling symlink '", prefix, "'"));
    }
    if (n == 0) return errors::InvalidArgument("Path '", path, "' cannot be resolved");  // "/" is missing?
    --n;
  }
  for (size_t i = n; i < parts.size(); ++i) {
    if (real != "/") real += "/";
    real += parts[i];
  }
  bool inside = false;
  for (const std::string& r : resolved_) inside = inside || IsUnder(real, r);
  if (!inside) {
    return denied(real == abs ? "is outside the directories this task may use"
                              : absl::StrCat("resolves to '", real, "', outside the directories this task may use"));
  }
  if (resolved != nullptr) *resolved = std::move(real);
  return absl::OkStatus();
}

// ---- PolicyEnv ----

Status PolicyEnv::Read(const std::string& path, std::string* resolved) const {
  if (policy_ == nullptr) {
    *resolved = path;
    return absl::OkStatus();
  }
  return policy_->CheckRead(path, resolved);
}

Status PolicyEnv::Write(const std::string& path, std::string* resolved) const {
  if (policy_ == nullptr) {
    *resolved = path;
    return absl::OkStatus();
  }
  return policy_->CheckWrite(path, resolved);
}

Status PolicyEnv::CheckNotRoot(const std::string& path, const std::string& resolved) const {
  if (policy_ != nullptr && policy_->IsAllowedRoot(resolved)) {
    return absl::PermissionDeniedError(absl::StrCat("Path '", path,
                                                    "' is an allowed directory itself, which this task "
                                                    "may not remove or rename (",
                                                    policy_->DebugString(), ")"));
  }
  return absl::OkStatus();
}

StatusOr<std::string> PolicyEnv::ReadFile(const std::string& path, int64_t max_bytes) const {
  std::string r;
  RETURN_IF_ERROR(Read(path, &r));
  return base()->ReadFile(r, max_bytes);
}

Status PolicyEnv::WriteFileAtomic(const std::string& path, absl::string_view contents, int mode) const {
  std::string r;
  RETURN_IF_ERROR(Write(path, &r));
  return base()->WriteFileAtomic(r, contents, mode);
}

bool PolicyEnv::FileExists(const std::string& path) const {
  std::string r;
  return Read(path, &r).ok() && base()->FileExists(r);
}

StatusOr<std::unique_ptr<WritableFile>> PolicyEnv::NewWritableFile(const std::string& path, bool append) const {
  std::string r;
  RETURN_IF_ERROR(Write(path, &r));
  return base()->NewWritableFile(r, append);
}

StatusOr<std::unique_ptr<WritableFile>> PolicyEnv::NewExclusiveFile(const std::string& path, int mode) const {
  std::string r;
  RETURN_IF_ERROR(Write(path, &r));
  return base()->NewExclusiveFile(r, mode);
}

StatusOr<std::unique_ptr<RandomAccessFile>> PolicyEnv::NewRandomAccessFile(const std::string& path) const {
  std::string r;
  RETURN_IF_ERROR(Read(path, &r));
  return base()->NewRandomAccessFile(r);
}

StatusOr<uint64_t> PolicyEnv::FileSize(const std::string& path) const {
  std::string r;
  RETURN_IF_ERROR(Read(path, &r));
  return base()->FileSize(r);
}

Status PolicyEnv::RenameFile(const std::string& from, const std::string& to) const {
  std::string rf, rt;
  RETURN_IF_ERROR(Write(from, &rf));
  RETURN_IF_ERROR(CheckNotRoot(from, rf));
  RETURN_IF_ERROR(Write(to, &rt));
  RETURN_IF_ERROR(CheckNotRoot(to, rt));
  return base()->RenameFile(rf, rt);
}

Status PolicyEnv::DeleteFile(const std::string& path) const {
  std::string r;
  RETURN_IF_ERROR(Write(path, &r));
  return base()->DeleteFile(r);
}

Status PolicyEnv::DeleteDir(const std::string& path) const {
  std::string r;
  RETURN_IF_ERROR(Write(path, &r));
  RETURN_IF_ERROR(CheckNotRoot(path, r));
  return base()->DeleteDir(r);
}

Status PolicyEnv::CreateDirs(const std::string& path) const {
  std::string r;
  RETURN_IF_ERROR(Write(path, &r));
  return base()->CreateDirs(r);
}

bool PolicyEnv::IsDirectory(const std::string& path) const {
  std::string r;
  return Read(path, &r).ok() && base()->IsDirectory(r);
}

StatusOr<std::vector<std::string>> PolicyEnv::GetChildren(const std::string& dir) const {
  std::string r;
  RETURN_IF_ERROR(Read(dir, &r));
  return base()->GetChildren(r);
}

Status PolicyEnv::SyncDir(const std::string& dir) const {
  std::string r;
  RETURN_IF_ERROR(Read(dir, &r));
  return base()->SyncDir(r);
}

std::shared_ptr<Env> MakeFileEnv(std::shared_ptr<const FilePolicy> policy, Env* base) {
  return std::make_shared<PolicyEnv>(std::move(policy), base);
}

}  // namespace dflow
