// Authentication and encryption of the gRPC transport (see framework/credentials.h for what the
// credentials are). Clients attach the cluster secret (and, from the chief, the chief's secret) to
// every call's metadata; the services check it first thing in every method, and TLS, when the
// credentials have a CA, carries it all encrypted. Included only by src/rpc/*.cc.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "framework/credentials.h"

namespace dflow::rpc {

// Metadata keys (lower case, as gRPC requires).
inline constexpr char kAuthorizationKey[] = "authorization";
inline constexpr char kChiefKey[] = "x-dflow-chief";

// What a server checks on each call.
class RpcAuthenticator {
 public:
  enum class Role {
    kMember,  // any holder of the cluster secret: run graphs, move tensors
    kChief,   // also the chief's secret: end the job (JobComplete), wipe state (Reset)
  };
  // `task` names the server in its log lines.
  RpcAuthenticator(const ClusterCredentials& creds, std::string task);

  // OK when the call carries what `role` needs; UNAUTHENTICATED (no or a wrong secret) or
  // PERMISSION_DENIED (a member calling a chief's method) otherwise, logged at most once every
  // few seconds per server (with how many were refused meanwhile), naming the peer and method.
  grpc::Status Check(const grpc::ServerContextBase& ctx, Role role, const char* method) const;

 private:
  void Log(const grpc::ServerContextBase& ctx, const char* method, const char* why) const;
  const std::string task_;
  const std::string secret_;
  const std::string chief_hash_;
  mutable std::mutex mu_;
  mutable int64_t last_log_us_ = 0;
  mutable int64_t suppressed_ = 0;
};

// The credentials a client of host:port presents: `given` when set; else the directory named by
// DFLOW_CREDENTIALS; else what the per-user store holds for that address (a local cluster started
// by this user without credentials); else none (plaintext, no secret: only an --insecure server
// accepts it). An error only for a DFLOW_CREDENTIALS directory that cannot be used.
StatusOr<ClusterCredentials> ClientCredentials(const ClusterCredentials& given, const std::string& host, int port);

// The credentials a server listens with: TLS with the task's certificate (requiring client
// certificates under mutual TLS) when `creds` has a CA, plaintext otherwise.
std::shared_ptr<grpc::ServerCredentials> NewServerCredentials(const ClusterCredentials& creds);

}  // namespace dflow::rpc
