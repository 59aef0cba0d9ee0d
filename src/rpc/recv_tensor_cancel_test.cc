// RecvTensor calls that give up: a call for a tensor that never comes, cancelled by its caller or
// past its deadline, must take its waiter (and the step state it made) with it.
#include <grpcpp/grpcpp.h>
#include <malloc.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "base/net.h"
#include "distributed/worker.h"
#include "framework/rendezvous.h"
#include "gtest/gtest.h"
#include "proto/rpc/services.grpc.pb.h"
#include "rpc/grpc_server.h"
#include "rpc/grpc_test_util.h"
#include "rpc/grpc_util.h"

namespace dflow::rpc {
namespace {

class AbandonedRecvTensorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = StartOneTaskServer();
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(s).value();
    stub_ = proto::rpc::WorkerService::NewStub(NewChannel("127.0.0.1:" + std::to_string(server_->port()),
                                                          server_->credentials()));
    grpc::ClientContext ctx;
    proto::GetStatusRequest req;
    proto::GetStatusResponse resp;
    ASSERT_TRUE(stub_->GetStatus(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.device_attributes_size(), 1);
    key_.send_device = resp.device_attributes(0).name();
    key_.send_device_incarnation = resp.device_attributes(0).incarnation();
    key_.recv_device = "/job:worker/replica:0/task:1/device:CPU:0";
    key_.frame_id = 0;
    key_.iteration = 0;
  }

  // `n` RecvTensor calls, `threads` at a time, each for a tensor of its own step that no one
  // sends; each gives up after `deadline_ms`, or is cancelled by its caller when `cancel`.
  // Returns how many did not end the way they should (DEADLINE_EXCEEDED or CANCELLED).
  int Abandon(int n, int threads, int deadline_ms, bool cancel) {
    std::atomic<int> next{0}, wrong{0};
    std::vector<std::thread> callers;
    for (int t = 0; t < threads; ++t) {
      callers.emplace_back([&] {
        for (int i = next++; i < n; i = next++) {
          RendezvousKey k = key_;
          k.edge_name = "never_sent_" + std::to_string(i);
          proto::RecvTensorRequest req;
          req.set_step_id(1000000 + i);
          req.set_rendezvous_key(CreateRendezvousKey(k));
          grpc::ClientContext ctx;
          ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(deadline_ms));
          auto reader = stub_->RecvTensor(&ctx, req);
          std::thread canceller;
          if (cancel) canceller = std::thread([&ctx] { ctx.TryCancel(); });
          proto::RecvTensorChunk chunk;
          bool got = reader->Read(&chunk);
          if (canceller.joinable()) canceller.join();
          grpc::Status st = reader->Finish();
          const grpc::StatusCode want = cancel ? grpc::StatusCode::CANCELLED : grpc::StatusCode::DEADLINE_EXCEEDED;
          if (got || (st.error_code() != want && st.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED)) ++wrong;
        }
      });
    }
    for (std::thread& c : callers) c.join();
    return wrong.load();
  }

  // Waits (bounded) until the server holds no step: the cancellations reach it asynchronously.
  size_t StepsLeftAfterSettling() {
    server_->worker()->WaitUntilStepsDone(10000);
    return server_->worker()->num_steps();
  }

  std::unique_ptr<GrpcServer> server_;
  std::unique_ptr<proto::rpc::WorkerService::Stub> stub_;
  RendezvousKey key_;
};

TEST_F(AbandonedRecvTensorTest, ACallPastItsDeadlineLeavesNoStepBehind) {
  ASSERT_EQ(Abandon(50, 10, 20, false), 0);
  EXPECT_EQ(StepsLeftAfterSettling(), 0u);
}

TEST_F(AbandonedRecvTensorTest, ACancelledCallLeavesNoStepBehind) {
  ASSERT_EQ(Abandon(50, 10, 5000, true), 0);
  EXPECT_EQ(StepsLeftAfterSettling(), 0u);
}

TEST_F(AbandonedRecvTensorTest, TenThousandAbandonedCallsLeaveTheHeapWhereItWas) {
  // Warm up first: gRPC's and the allocator's own caches grow to their working size.
  ASSERT_EQ(Abandon(1000, 50, 20, false), 0);
  ASSERT_EQ(StepsLeftAfterSettling(), 0u);
  const size_t before = mallinfo2().uordblks;
  ASSERT_EQ(Abandon(10000, 50, 20, false), 0);
  ASSERT_EQ(StepsLeftAfterSettling(), 0u);
  const size_t after = mallinfo2().uordblks;
  // Each leaked call held about 20 KB (200 MB for 10,000); what is left must be noise.
  EXPECT_LT(after, before + (size_t{8} << 20)) << "heap in use grew from " << before << " to " << after << " bytes";
}

}  // namespace
}  // namespace dflow::rpc
