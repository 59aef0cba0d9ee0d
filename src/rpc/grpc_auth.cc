#include "rpc/grpc_auth.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/support/client_interceptor.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "rpc/grpc_util.h"

namespace dflow::rpc {
namespace {

constexpr int64_t kLogIntervalUs = 10'000'000;
constexpr char kBearer[] = "Bearer ";

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The value of metadata `key`, or "" (a key given twice counts as absent: ambiguous).
std::string Metadata(const grpc::ServerContextBase& ctx, const char* key) {
  auto range = ctx.client_metadata().equal_range(key);
  if (range.first == range.second || std::next(range.first) != range.second) return "";
  return std::string(range.first->second.data(), range.first->second.size());
}

// Adds the secrets to every call of a channel.
class AuthInterceptor : public grpc::experimental::Interceptor {
 public:
  AuthInterceptor(const std::string* authorization, const std::string* chief)
      : authorization_(authorization), chief_(chief) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      auto* md = methods->GetSendInitialMetadata();
      if (!authorization_->empty()) md->emplace(kAuthorizationKey, *authorization_);
      if (!chief_->empty()) md->emplace(kChiefKey, *chief_);
    }
    methods->Proceed();
  }

 private:
  const std::string* authorization_;
  const std::string* chief_;
};

class AuthInterceptorFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit AuthInterceptorFactory(const ClusterCredentials& creds)
      : authorization_(creds.secret.empty() ? "" : kBearer + creds.secret), chief_(creds.chief_secret) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(grpc::experimental::ClientRpcInfo*) override {
    return new AuthInterceptor(&authorization_, &chief_);
  }

 private:
  const std::string authorization_;
  const std::string chief_;
};

}  // namespace

RpcAuthenticator::RpcAuthenticator(const ClusterCredentials& creds, std::string task)
    : task_(std::move(task)),
      secret_(creds.insecure ? "" : creds.secret),
      chief_hash_(creds.insecure ? "" : creds.chief_secret_sha256) {}

grpc::Status RpcAuthenticator::Check(const grpc::ServerContextBase& ctx, Role role, const char* method) const {
  if (!secret_.empty()) {
    const std::string auth = Metadata(ctx, kAuthorizationKey);
    const size_t prefix = sizeof(kBearer) - 1;
    if (auth.size() <= prefix || auth.compare(0, prefix, kBearer) != 0 ||
        !ConstantTimeEquals(auth.substr(prefix), secret_)) {
      Log(ctx, method, auth.empty() ? "no cluster secret" : "a wrong cluster secret");
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          absl::StrCat("Task ", task_, " refuses ", method,
                                       ": the call does not carry this cluster's secret (give the client the "
                                       "cluster's credentials: --credentials DIR or DFLOW_CREDENTIALS)"));
    }
  }
  if (role == Role::kChief && !chief_hash_.empty()) {
    const std::string chief = Metadata(ctx, kChiefKey);
    if (chief.empty() || !ConstantTimeEquals(Sha256Hex(chief), chief_hash_)) {
      Log(ctx, method, chief.empty() ? "no chief secret" : "a wrong chief secret");
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                          absl::StrCat("Task ", task_, " refuses ", method,
                                       ": only the chief may call it, and the caller lacks the chief's secret"));
    }
  }
  return grpc::Status::OK;
}

void RpcAuthenticator::Log(const grpc::ServerContextBase& ctx, const char* method, const char* why) const {
  int64_t suppressed = 0;
  {
    std::lock_guard<std::mutex> l(mu_);
    const int64_t now = NowUs();
    if (last_log_us_ != 0 && now - last_log_us_ < kLogIntervalUs) {
      ++suppressed_;
      return;
    }
    last_log_us_ = now;
    suppressed = suppressed_;
    suppressed_ = 0;
  }
  std::string peer = ctx.peer();
  std::fprintf(stderr, "dflow: task %s refused %s from %s: %s%s\n", task_.c_str(), method, peer.c_str(), why,
               suppressed > 0 ? absl::StrCat(" (and ", suppressed, " more refused calls since the last report)").c_str()
                              : "");
}

StatusOr<ClusterCredentials> ClientCredentials(const ClusterCredentials& given, const std::string& host, int port) {
  if (given.IsSet()) {
    RETURN_IF_ERROR(given.Validate());
    return given;
  }
  const char* dir = std::getenv(kCredentialsEnv);
  if (dir != nullptr && *dir != '\0') {
    StatusOr<ClusterCredentials> loaded = LoadCredentials(dir);
    if (!loaded.ok()) return errors::Annotate(loaded.status(), absl::StrCat(kCredentialsEnv, "=", dir, ": "));
    return loaded;
  }
  StatusOr<ClusterCredentials> stored = FindStoredCredentials(host, port);
  if (stored.ok()) return stored;
  return ClusterCredentials{};
}

std::shared_ptr<grpc::ServerCredentials> NewServerCredentials(const ClusterCredentials& creds) {
  if (!creds.tls()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions opts(creds.mutual_tls ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                                          : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  opts.pem_root_certs = creds.ca_pem;
  opts.pem_key_cert_pairs.push_back({creds.key_pem, creds.cert_pem});
  return grpc::SslServerCredentials(opts);
}

std::shared_ptr<grpc::Channel> NewChannel(const std::string& address, const ClusterCredentials& creds) {
  grpc::ChannelArguments args = ChannelArguments();
  std::shared_ptr<grpc::ChannelCredentials> channel_creds;
  if (creds.tls()) {
    grpc::SslCredentialsOptions opts;
    opts.pem_root_certs = creds.ca_pem;
    opts.pem_private_key = creds.key_pem;
    opts.pem_cert_chain = creds.cert_pem;
    channel_creds = grpc::SslCredentials(opts);
    if (!creds.server_name.empty()) args.SetSslTargetNameOverride(creds.server_name);
  } else {
    channel_creds = grpc::InsecureChannelCredentials();
  }
  if (creds.secret.empty() && creds.chief_secret.empty()) {
    return grpc::CreateCustomChannel(address, channel_creds, args);
  }
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<AuthInterceptorFactory>(creds));
  return grpc::experimental::CreateCustomChannelWithInterceptors(address, channel_creds, args, std::move(interceptors));
}

}  // namespace dflow::rpc
