// The two RecvTensor paths of GrpcRemoteWorker: a key seen for the first time streams; a key whose
// last tensor fit in one chunk comes by the unary RecvTensorUnary, a bigger one streams again.
// Both deliver the same values; the unary call gives up at its deadline or when cancelled, and
// takes its waiter on the server with it.
#include <chrono>
#include <cstring>
#include <future>
#include <string>
#include <vector>

#include "distributed/worker.h"
#include "framework/rendezvous.h"
#include "gtest/gtest.h"
#include "proto/rpc/services.grpc.pb.h"
#include "rpc/grpc_remote_worker.h"
#include "rpc/grpc_server.h"
#include "rpc/grpc_test_util.h"
#include "rpc/grpc_util.h"

namespace dflow::rpc {
namespace {

class RecvTensorPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = StartOneTaskServer();
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(s).value();
    const std::string address = "127.0.0.1:" + std::to_string(server_->port());
    remote_ = NewGrpcRemoteWorker(address, "/job:worker/replica:0/task:0", server_->credentials());
    auto stub = proto::rpc::WorkerService::NewStub(NewChannel(address, server_->credentials()));
    grpc::ClientContext ctx;
    proto::GetStatusRequest req;
    proto::GetStatusResponse resp;
    ASSERT_TRUE(stub->GetStatus(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.device_attributes_size(), 1);
    key_.send_device = resp.device_attributes(0).name();
    key_.send_device_incarnation = resp.device_attributes(0).incarnation();
    key_.recv_device = "/job:worker/replica:0/task:1/device:CPU:0";
  }

  std::string Key(const std::string& edge) {
    RendezvousKey k = key_;
    k.edge_name = edge;
    return CreateRendezvousKey(k);
  }

  // Receives `key` of `step` through the remote worker (the caller deposits it, or not).
  Status Recv(int64_t step, const std::string& key, RecvTensorResult* result, CallOptions* opts = nullptr) {
    proto::RecvTensorRequest req;
    req.set_step_id(step);
    req.set_rendezvous_key(key);
    std::promise<Status> done;
    remote_->RecvTensorAsync(&req, result, opts, [&done](const Status& s) { done.set_value(s); });
    std::future<Status> f = done.get_future();
    if (f.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
      return errors::DeadlineExceeded("no answer in 30 s");
    }
    return f.get();
  }

  // Deposits `value` for `key` of `step` on the server, receives it from the client side and
  // checks that the same values arrived. Returns which path carried it.
  enum class Path { kUnary, kStreamed, kFailed };
  Path SendAndReceive(int64_t step, const std::string& key, const Tensor& value) {
    EXPECT_TRUE(server_->worker()->Deposit(step, key, value, false).ok());
    const RecvTensorCallCounts before = GetRecvTensorCallCounts();
    RecvTensorResult r;
    Status s = Recv(step, key, &r);
    const RecvTensorCallCounts after = GetRecvTensorCallCounts();
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) return Path::kFailed;
    EXPECT_FALSE(r.is_dead);
    EXPECT_EQ(r.tensor.dtype(), value.dtype());
    EXPECT_EQ(r.tensor.shape(), value.shape());
    EXPECT_EQ(r.tensor.TotalBytes(), value.TotalBytes());
    EXPECT_EQ(0, std::memcmp(r.tensor.raw_data(), value.raw_data(), value.TotalBytes()));
    EXPECT_EQ(after.unary + after.streamed, before.unary + before.streamed + 1);
    return after.unary > before.unary ? Path::kUnary : Path::kStreamed;
  }

  // Waits (up to 10 s) until the server holds `steps` steps or fewer: the abandoned call's step
  // goes when the server sees the call end, asynchronously.
  bool StepsBackTo(size_t steps) {
    return server_->worker()->WaitForSteps([steps](size_t n) { return n <= steps; }, 10000);
  }

  static Tensor Floats(int64_t n, float base) {
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = base + static_cast<float>(i % 9973) * 0.5f;
    return Tensor::FromValues<float>(v, TensorShape({n})).value();
  }

  std::unique_ptr<GrpcServer> server_;
  std::shared_ptr<WorkerInterface> remote_;
  RendezvousKey key_;
};

TEST_F(RecvTensorPathTest, ASmallTensorComesByTheUnaryCallAfterItsFirstStep) {
  const std::string key = Key("small");
  EXPECT_EQ(SendAndReceive(1, key, Floats(32, 1.0f)), Path::kStreamed);  // first time: its size is unknown
  EXPECT_EQ(SendAndReceive(2, key, Floats(32, 2.0f)), Path::kUnary);
  EXPECT_EQ(SendAndReceive(3, key, Floats(32, 3.0f)), Path::kUnary);
}

TEST_F(RecvTensorPathTest, ALargeTensorAlwaysStreams) {
  const std::string key = Key("large");
  const int64_t n = static_cast<int64_t>(kChunkBytes / sizeof(float)) * 2 + 7;  // three chunks
  EXPECT_EQ(SendAndReceive(1, key, Floats(n, 1.0f)), Path::kStreamed);
  EXPECT_EQ(SendAndReceive(2, key, Floats(n, 2.0f)), Path::kStreamed);
}

TEST_F(RecvTensorPathTest, ATensorThatGrewStillArrivesWholeThenItsKeyStreams) {
  const std::string key = Key("grows");
  EXPECT_EQ(SendAndReceive(1, key, Floats(8, 1.0f)), Path::kStreamed);
  const int64_t n = static_cast<int64_t>(kChunkBytes / sizeof(float)) + 100;  // two chunks
  EXPECT_EQ(SendAndReceive(2, key, Floats(n, 2.0f)), Path::kUnary);
  EXPECT_EQ(SendAndReceive(3, key, Floats(n, 3.0f)), Path::kStreamed);
  EXPECT_EQ(SendAndReceive(4, key, Floats(8, 4.0f)), Path::kStreamed);
  EXPECT_EQ(SendAndReceive(5, key, Floats(8, 5.0f)), Path::kUnary);
}

TEST_F(RecvTensorPathTest, ADeadTensorTakesTheUnaryCallToo) {
  const std::string key = Key("dead");
  EXPECT_EQ(SendAndReceive(1, key, Floats(4, 1.0f)), Path::kStreamed);
  ASSERT_TRUE(server_->worker()->Deposit(2, key, Tensor(), true).ok());
  const RecvTensorCallCounts before = GetRecvTensorCallCounts();
  RecvTensorResult r;
  ASSERT_TRUE(Recv(2, key, &r).ok());
  EXPECT_TRUE(r.is_dead);
  EXPECT_EQ(GetRecvTensorCallCounts().unary, before.unary + 1);
}

TEST_F(RecvTensorPathTest, TheUnaryCallEndsAtItsDeadlineAndLeavesNoStepBehind) {
  const std::string key = Key("late");
  EXPECT_EQ(SendAndReceive(1, key, Floats(4, 1.0f)), Path::kStreamed);
  const size_t steps = server_->worker()->num_steps();  // step 1's deposit may still be held
  const RecvTensorCallCounts before = GetRecvTensorCallCounts();
  CallOptions opts;
  opts.timeout_ms = 100;
  RecvTensorResult r;
  const auto start = std::chrono::steady_clock::now();
  Status s = Recv(2, key, &r, &opts);  // nothing is deposited for step 2
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(GetRecvTensorCallCounts().unary, before.unary + 1);
  EXPECT_TRUE(StepsBackTo(steps));
}

TEST_F(RecvTensorPathTest, TheUnaryCallEndsWhenCancelledAndLeavesNoStepBehind) {
  const std::string key = Key("cancelled");
  EXPECT_EQ(SendAndReceive(1, key, Floats(4, 1.0f)), Path::kStreamed);
  const size_t steps = server_->worker()->num_steps();  // step 1's deposit may still be held
  const RecvTensorCallCounts before = GetRecvTensorCallCounts();
  CallOptions opts;
  opts.timeout_ms = 20000;
  RecvTensorResult r;
  proto::RecvTensorRequest req;
  req.set_step_id(2);
  req.set_rendezvous_key(key);
  std::promise<Status> done;
  remote_->RecvTensorAsync(&req, &r, &opts, [&done](const Status& s) { done.set_value(s); });
  // Cancelled once the server holds the call's step: the receive is waiting there.
  ASSERT_TRUE(server_->worker()->WaitForSteps([steps](size_t n) { return n > steps; }, 10000));
  opts.StartCancel();
  std::future<Status> f = done.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(f.get().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(GetRecvTensorCallCounts().unary, before.unary + 1);
  EXPECT_TRUE(StepsBackTo(steps));
}

}  // namespace
}  // namespace dflow::rpc
