// Shared pieces of the gRPC transport: status conversion and channel/server settings. Included
// only by src/rpc/*.cc.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "base/status.h"

namespace dflow::rpc {

// Canonical codes map 1:1.
inline Status FromGrpc(const grpc::Status& s) {
  if (s.ok()) return absl::OkStatus();
  return Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}
inline grpc::Status ToGrpc(const Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

// A channel to "host:port" with unlimited message sizes, fast reconnects and keepalive pings,
// so that a peer that dies or hangs is noticed within seconds instead of never.
std::shared_ptr<grpc::Channel> NewChannel(const std::string& address);
// The same settings for a server.
void ConfigureServer(grpc::ServerBuilder* builder);
// Sets the deadline of `ctx` `timeout_ms` from now (nothing for 0).
void SetTimeout(grpc::ClientContext* ctx, int64_t timeout_ms);

// The least time one connection attempt gets (gRPC's default): enough for any real link.
constexpr int kMinConnectTimeoutMs = 20000;

// Bytes of a tensor per RecvTensor chunk.
constexpr size_t kChunkBytes = size_t{4} << 20;

}  // namespace dflow::rpc
