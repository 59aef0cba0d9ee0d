#include "rpc/grpc_util.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <mutex>

#include "absl/synchronization/mutex.h"

namespace dflow::rpc {

void IgnoreMutexDeadlockCycles() {
  static std::once_flag once;
  std::call_once(once, [] { absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore); });
}

grpc::ChannelArguments ChannelArguments() {
  IgnoreMutexDeadlockCycles();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 5000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // A peer that restarts is found again within a second: reconnect attempts start 100 ms after
  // a failure and back off to 1 s at most.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  // gRPC also reads this one as the least time a connection attempt may take before it is given
  // up (TCP handshake plus the peer's HTTP/2 SETTINGS: two round trips). At 100 ms, as it once
  // was, every task more than 50 ms away, and many clients connecting at once on one machine,
  // failed; gRPC's default of 20 s covers links across the world. Calls still fail at their
  // own deadlines, and a refused connection fails at once.
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, kMinConnectTimeoutMs);
  // Each channel its own connection: tasks do not share one TCP stream's flow control.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  // Big flow-control windows: a tensor stream should not stall waiting for window updates.
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 32 << 20);
  // No gRPC retries (dflow sets no retry policy; a failed call fails its step, which the session
  // layer handles): the retry machinery copies each call's send ops in case it must replay them,
  // about 10% of the CPU of a training step of small RecvTensor calls.
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  return args;
}

void ConfigureServer(grpc::ServerBuilder* builder, int64_t max_message_bytes) {
  IgnoreMutexDeadlockCycles();
  builder->SetMaxReceiveMessageSize(static_cast<int>(std::clamp<int64_t>(max_message_bytes, 1024,
                                                                         std::numeric_limits<int>::max())));
  builder->SetMaxSendMessageSize(-1);
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 5000);
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder->AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 1000);
  builder->AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  builder->AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 32 << 20);
}

void SetTimeout(grpc::ClientContext* ctx, int64_t timeout_ms) {
  if (timeout_ms > 0) ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
}

}  // namespace dflow::rpc
