#include "framework/credentials.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_cat.h"
#include "base/env.h"
#include "base/net.h"

namespace dflow {
namespace {

// Before main, and so before any OpenSSL use by dflow or gRPC: OpenSSL without its exit-time
// cleanup. That atexit handler frees OpenSSL's global tables once main returns, while gRPC's
// threads, which outlive main, may still be setting up a TLS connection (a channel reconnecting
// to a task that has already ended): a worker crashed that way at exit in 1 of about 30 runs.
// The memory goes back to the system with the process. (A process that initialized OpenSSL
// before loading dflow, such as Python after importing hashlib, keeps its own choice.)
[[maybe_unused]] const int kOpenSslWithoutExitCleanup = OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr);

constexpr char kSecret[] = "secret";
constexpr char kChiefSecret[] = "chief_secret";
constexpr char kChiefHash[] = "chief_secret.sha256";
constexpr char kCa[] = "ca.crt";
constexpr char kCert[] = "tls.crt";
constexpr char kKey[] = "tls.key";
constexpr char kServerName[] = "server_name";
constexpr char kMutualTls[] = "mutual_tls";

std::string Trim(const std::string& s) { return std::string(absl::StripAsciiWhitespace(s)); }

// Group or other users may read or write `path`.
bool OpenToOthers(const struct stat& st) { return (st.st_mode & 077) != 0; }

// Reads dir/name into *out; absent files leave it empty. Files that hold secrets must be private.
Status ReadPart(const std::string& dir, const char* name, bool secret, std::string* out) {
  const std::string path = JoinPath(dir, name);
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return errors::PermissionDenied("Cannot read ", path, ": ", std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) return errors::InvalidArgument("Credentials file ", path, " is not a regular file");
  if (secret && OpenToOthers(st)) {
    return errors::PermissionDenied("Credentials file ", path, " can be read by other users (mode ",
                                    absl::StrFormat("%04o", st.st_mode & 07777), "); run: chmod 600 ", path);
  }
  ASSIGN_OR_RETURN(*out, Env::Default()->ReadFile(path, 1 << 20));
  return absl::OkStatus();
}

// Readable by the owner only from its creation on (a temporary created O_EXCL | O_NOFOLLOW, so a
// link planted beside it is never followed), synced, renamed into place, the directory synced.
Status WritePart(const std::string& dir, const char* name, const std::string& contents) {
  return Env::Default()->WriteFileAtomic(JoinPath(dir, name), contents, 0600);
}

// mkdir -p with mode 0700 for the directories it makes; `dir` itself must end up private.
Status MakePrivateDir(const std::string& dir) {
  RETURN_IF_ERROR(Env::Default()->CreateDirs(dir));
  if (::chmod(dir.c_str(), 0700) != 0) {
    return errors::PermissionDenied("Cannot make ", dir, " private: ", std::strerror(errno));
  }
  return absl::OkStatus();
}

// The store root, checked: ours and private.
StatusOr<std::string> StoreRoot(bool create) {
  std::string root = CredentialStoreRoot();
  if (root.empty()) return errors::NotFound("No configuration directory (HOME is not set)");
  struct stat st;
  if (::stat(root.c_str(), &st) != 0) {
    if (!create) return errors::NotFound("No credential store at ", root);
    RETURN_IF_ERROR(MakePrivateDir(root));
    if (::stat(root.c_str(), &st) != 0) return errors::Internal("Cannot stat ", root);
  }
  if (st.st_uid != ::geteuid()) {
    return errors::PermissionDenied("The credential store ", root, " belongs to another user (uid ", st.st_uid, ")");
  }
  if (OpenToOthers(st)) {
    return errors::PermissionDenied("The credential store ", root, " is open to other users; run: chmod 700 ", root);
  }
  return root;
}

// The file name of a target record: loopback hosts share one name, so that a client of
// "localhost:P" finds the server of "127.0.0.1:P".
std::string TargetName(const std::string& host, int port) {
  std::string h = IsLoopbackHost(host) ? "loopback" : absl::AsciiStrToLower(host);
  for (char& c : h) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '-') c = '_';
  }
  return absl::StrCat(h, "_", port);
}

bool ValidKey(const std::string& key) {
  if (key.empty() || key.size() > 128) return false;
  for (char c : key) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_') return false;
  }
  return true;
}

}  // namespace

Status ClusterCredentials::Validate() const {
  if (insecure) {
    if (!secret.empty() || tls() || !chief_secret.empty()) {
      return errors::InvalidArgument("Credentials are insecure and also set a secret or certificates; choose one");
    }
    return absl::OkStatus();
  }
  if (!secret.empty() && secret.size() < 16) {
    return errors::InvalidArgument("The cluster secret is ", secret.size(), " characters; at least 16 are needed");
  }
  if (cert_pem.empty() != key_pem.empty()) {
    return errors::InvalidArgument("A TLS certificate needs its key and a key its certificate (tls.crt, tls.key)");
  }
  if (!cert_pem.empty() && ca_pem.empty()) {
    return errors::InvalidArgument("A TLS certificate without the CA certificate (ca.crt) that clients check it with");
  }
  if (mutual_tls && cert_pem.empty()) {
    return errors::InvalidArgument("Mutual TLS needs this party's certificate and key (tls.crt, tls.key)");
  }
  if (!chief_secret.empty() && !chief_secret_sha256.empty() &&
      !ConstantTimeEquals(Sha256Hex(chief_secret), chief_secret_sha256)) {
    return errors::InvalidArgument("The chief secret does not match chief_secret.sha256");
  }
  return absl::OkStatus();
}

ClusterCredentials ClusterCredentials::WithoutChief() const {
  ClusterCredentials c = *this;
  if (!c.chief_secret.empty() && c.chief_secret_sha256.empty()) c.chief_secret_sha256 = Sha256Hex(c.chief_secret);
  c.chief_secret.clear();
  return c;
}

ClusterCredentials ClusterCredentials::WithoutTls() const {
  ClusterCredentials c = *this;
  c.ca_pem.clear();
  c.cert_pem.clear();
  c.key_pem.clear();
  c.server_name.clear();
  c.mutual_tls = false;
  return c;
}

StatusOr<ClusterCredentials> LoadCredentials(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return errors::NotFound("No credentials directory ", dir);
  if (!S_ISDIR(st.st_mode)) return errors::InvalidArgument("Credentials path ", dir, " is not a directory");
  ClusterCredentials c;
  std::string mutual;
  RETURN_IF_ERROR(ReadPart(dir, kSecret, true, &c.secret));
  RETURN_IF_ERROR(ReadPart(dir, kChiefSecret, true, &c.chief_secret));
  RETURN_IF_ERROR(ReadPart(dir, kChiefHash, false, &c.chief_secret_sha256));
  RETURN_IF_ERROR(ReadPart(dir, kCa, false, &c.ca_pem));
  RETURN_IF_ERROR(ReadPart(dir, kCert, false, &c.cert_pem));
  RETURN_IF_ERROR(ReadPart(dir, kKey, true, &c.key_pem));
  RETURN_IF_ERROR(ReadPart(dir, kServerName, false, &c.server_name));
  c.mutual_tls = Env::Default()->FileExists(JoinPath(dir, kMutualTls));
  c.secret = Trim(c.secret);
  c.chief_secret = Trim(c.chief_secret);
  c.chief_secret_sha256 = absl::AsciiStrToLower(Trim(c.chief_secret_sha256));
  c.server_name = Trim(c.server_name);
  if (!c.IsSet()) return errors::InvalidArgument("Credentials directory ", dir, " holds no secret and no ca.crt");
  if (!c.chief_secret.empty() && c.chief_secret_sha256.empty()) c.chief_secret_sha256 = Sha256Hex(c.chief_secret);
  Status s = c.Validate();
  if (!s.ok()) return errors::InvalidArgument("Credentials directory ", dir, ": ", s.message());
  return c;
}

Status WriteCredentials(const ClusterCredentials& c, const std::string& dir) {
  RETURN_IF_ERROR(c.Validate());
  RETURN_IF_ERROR(MakePrivateDir(dir));
  auto put = [&](const char* name, const std::string& value) -> Status {
    if (value.empty()) return absl::OkStatus();
    return WritePart(dir, name, value.back() == '\n' ? value : value + "\n");
  };
  RETURN_IF_ERROR(put(kSecret, c.secret));
  RETURN_IF_ERROR(put(kChiefSecret, c.chief_secret));
  RETURN_IF_ERROR(put(kChiefHash, c.chief_secret.empty() ? c.chief_secret_sha256 : Sha256Hex(c.chief_secret)));
  RETURN_IF_ERROR(put(kCa, c.ca_pem));
  RETURN_IF_ERROR(put(kCert, c.cert_pem));
  RETURN_IF_ERROR(put(kKey, c.key_pem));
  RETURN_IF_ERROR(put(kServerName, c.server_name));
  if (c.mutual_tls) RETURN_IF_ERROR(WritePart(dir, kMutualTls, "1\n"));
  return absl::OkStatus();
}

StatusOr<std::string> NewSecret() {
  unsigned char bytes[32];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    ssize_t n = ::getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return errors::Internal("getrandom failed: ", std::strerror(errno));
    got += static_cast<size_t>(n);
  }
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(bytes), sizeof(bytes)));
}

std::string Sha256Hex(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(digest), len));
}

bool ConstantTimeEquals(const std::string& a, const std::string& b) {
  unsigned char da[EVP_MAX_MD_SIZE], db[EVP_MAX_MD_SIZE];
  unsigned int la = 0, lb = 0;
  EVP_Digest(a.data(), a.size(), da, &la, EVP_sha256(), nullptr);
  EVP_Digest(b.data(), b.size(), db, &lb, EVP_sha256(), nullptr);
  return la == lb && CRYPTO_memcmp(da, db, la) == 0;
}

std::string CredentialStoreRoot() {
  if (const char* d = std::getenv("DFLOW_CONFIG_DIR"); d != nullptr && *d != '\0') return d;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x != nullptr && *x != '\0') return JoinPath(x, "dflow");
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') return JoinPath(JoinPath(h, ".config"), "dflow");
  return "";
}

StatusOr<ClusterCredentials> LoadOrCreateStoredCredentials(const std::string& key, bool* created) {
  if (created != nullptr) *created = false;
  if (!ValidKey(key)) return errors::InvalidArgument("Bad cluster key '", key, "'");
  ASSIGN_OR_RETURN(std::string root, StoreRoot(true));
  const std::string clusters = JoinPath(root, "clusters");
  RETURN_IF_ERROR(MakePrivateDir(clusters));
  const std::string dir = JoinPath(clusters, key);
  StatusOr<ClusterCredentials> found = LoadCredentials(dir);
  if (found.ok() || found.status().code() != absl::StatusCode::kNotFound) return found;
  // Made aside and renamed into place: a task that starts at the same moment either renames
  // first or finds the other's directory (rename fails on a non-empty target).
  ASSIGN_OR_RETURN(ClusterCredentials fresh, GenerateClusterCredentials({}));
  ASSIGN_OR_RETURN(std::string suffix, NewSecret());
  const std::string tmp = JoinPath(clusters, absl::StrCat(".tmp-", suffix.substr(0, 16)));
  RETURN_IF_ERROR(WriteCredentials(fresh, tmp));
  if (::rename(tmp.c_str(), dir.c_str()) == 0) {
    if (created != nullptr) *created = true;
    return fresh;
  }
  const int err = errno;
  if (auto names = Env::Default()->GetChildren(tmp); names.ok()) {
    for (const std::string& n : *names) ::unlink(JoinPath(tmp, n).c_str());
  }
  ::rmdir(tmp.c_str());
  if (err != ENOTEMPTY && err != EEXIST) {
    return errors::Internal("Cannot store credentials in ", dir, ": ", std::strerror(err));
  }
  return LoadCredentials(dir);
}

Status PublishStoredTarget(const std::string& host, int port, const std::string& key) {
  if (!ValidKey(key)) return errors::InvalidArgument("Bad cluster key '", key, "'");
  ASSIGN_OR_RETURN(std::string root, StoreRoot(true));
  const std::string targets = JoinPath(root, "targets");
  RETURN_IF_ERROR(MakePrivateDir(targets));
  return WritePart(targets, TargetName(host, port).c_str(), key + "\n");
}

void UnpublishStoredTarget(const std::string& host, int port, const std::string& key, bool remove_cluster) {
  StatusOr<std::string> root = StoreRoot(false);
  if (!root.ok()) return;
  const std::string path = JoinPath(JoinPath(*root, "targets"), TargetName(host, port));
  StatusOr<std::string> named = Env::Default()->ReadFile(path, 4096);
  if (named.ok() && Trim(*named) == key) ::unlink(path.c_str());
  if (remove_cluster && ValidKey(key)) {
    const std::string dir = JoinPath(JoinPath(*root, "clusters"), key);
    if (auto names = Env::Default()->GetChildren(dir); names.ok()) {
      for (const std::string& n : *names) ::unlink(JoinPath(dir, n).c_str());
    }
    ::rmdir(dir.c_str());
  }
}

StatusOr<ClusterCredentials> FindStoredCredentials(const std::string& host, int port) {
  ASSIGN_OR_RETURN(std::string root, StoreRoot(false));
  const std::string path = JoinPath(JoinPath(root, "targets"), TargetName(host, port));
  StatusOr<std::string> key = Env::Default()->ReadFile(path, 4096);
  if (!key.ok()) return errors::NotFound("No stored credentials for ", host, ":", port);
  const std::string k = Trim(*key);
  if (!ValidKey(k)) return errors::InvalidArgument("Bad cluster key in ", path);
  return LoadCredentials(JoinPath(JoinPath(root, "clusters"), k));
}

}  // namespace dflow
