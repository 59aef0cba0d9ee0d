// Shared pieces of the gRPC transport: status conversion and channel/server settings. Included
// only by src/rpc/*.cc.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "base/status.h"
#include "framework/credentials.h"

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

// Turns off absl::Mutex's deadlock detection in this process (once): where absl is built with it
// on (without NDEBUG, as some distributions ship it), every lock of gRPC's mutexes updates a lock
// graph, a few percent of a small RPC's CPU. ChannelArguments and ConfigureServer call it.
void IgnoreMutexDeadlockCycles();

// The settings of every channel: fast reconnects and keepalive pings, so that a peer that dies or
// hangs is noticed within seconds instead of never; big flow-control windows.
grpc::ChannelArguments ChannelArguments();
// A channel to "host:port" with those settings that presents `creds` (rpc/grpc_auth.cc): TLS when
// they have a CA, the secrets on every call.
std::shared_ptr<grpc::Channel> NewChannel(const std::string& address, const ClusterCredentials& creds);
// The same settings for a server; requests above `max_message_bytes` fail with
// RESOURCE_EXHAUSTED before they are read.
void ConfigureServer(grpc::ServerBuilder* builder, int64_t max_message_bytes);
// Sets the deadline of `ctx` `timeout_ms` from now (nothing for 0).
void SetTimeout(grpc::ClientContext* ctx, int64_t timeout_ms);

// The least time one connection attempt gets (gRPC's default): enough for any real link.
constexpr int kMinConnectTimeoutMs = 20000;

// Bytes of a tensor per RecvTensor chunk.
constexpr size_t kChunkBytes = size_t{4} << 20;

}  // namespace dflow::rpc
