// _Send and _Recv kernels one at a time, against a fake rendezvous: the key they use, values,
// deadness, errors, and a missing rendezvous.
#include <map>

#include "framework/device.h"
#include "framework/op_kernel.h"
#include "framework/rendezvous.h"
#include "gmock/gmock.h"
#include "graph/graph.h"
#include "gtest/gtest.h"
#include "ops/register_all.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

constexpr char kPs[] = "/job:ps/replica:0/task:0/device:CPU:0";
constexpr char kWorker[] = "/job:worker/replica:0/task:0/device:CPU:0";

// Records sends; answers receives from what was sent (or with `recv_error`).
class FakeRendezvous : public Rendezvous {
 public:
  struct Sent {
    Tensor value;
    bool is_dead;
  };
  Status Send(const std::string& key, const Tensor& value, bool is_dead) override {
    if (!send_error.ok()) return send_error;
    sent[key] = {value, is_dead};
    return absl::OkStatus();
  }
  void RecvAsync(const std::string& key, DoneCallback done) override {
    if (!recv_error.ok()) return done(recv_error, Tensor(), false);
    auto it = sent.find(key);
    if (it == sent.end()) return done(errors::NotFound("no value for ", key), Tensor(), false);
    done(absl::OkStatus(), it->second.value, it->second.is_dead);
  }
  void StartAbort(const Status&) override {}

  std::map<std::string, Sent> sent;
  Status send_error, recv_error;
};

AttrMap PairAttrs(int64_t incarnation = 42) {
  return {{"tensor_name", std::string("edge_3_a")},
          {"send_device", std::string(kPs)},
          {"send_device_incarnation", incarnation},
          {"recv_device", std::string(kWorker)}};
}

std::string ExpectedKey(uint64_t incarnation = 42) {
  return CreateRendezvousKey({kPs, incarnation, kWorker, "edge_3_a", 0, 0});
}

class SendRecvTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterAllOps(); }

  // Builds the node (through AddNode, so the OpDef is checked) and its kernel.
  std::unique_ptr<OpKernel> Kernel(const std::string& op, AttrMap attrs, DType input_type = DT_INVALID) {
    NodeSpec spec;
    spec.name = op == "_Send" ? "send" : "recv";
    spec.op = op;
    spec.attrs = std::move(attrs);
    if (input_type != DT_INVALID) {
      NodeSpec c;
      c.name = "c";
      c.op = "Placeholder";
      c.attrs["dtype"] = input_type;
      c.attrs["shape"] = PartialTensorShape();
      auto cn = g_.AddNode(std::move(c));
      EXPECT_TRUE(cn.ok()) << cn.status();
      spec.inputs = {{*cn, 0}};
    }
    auto n = g_.AddNode(std::move(spec));
    EXPECT_TRUE(n.ok()) << n.status();
    if (!n.ok()) return nullptr;
    auto k = KernelRegistry::Global()->CreateKernel(&device_, "CPU", (*n)->props_ptr());
    EXPECT_TRUE(k.ok()) << k.status();
    return k.ok() ? std::move(k).value() : nullptr;
  }

  Status RunSend(OpKernel* k, TensorValue in, Rendezvous* r) {
    StepParams step;
    step.device = &device_;
    step.rendezvous = r;
    OpKernelContext ctx(&step, k, &in, 1);
    k->Compute(&ctx);
    return ctx.status();
  }

  // Runs a _Recv; `out` gets its output. The fake answers synchronously.
  Status RunRecv(OpKernel* k, Rendezvous* r, TensorValue* out) {
    StepParams step;
    step.device = &device_;
    step.rendezvous = r;
    OpKernelContext ctx(&step, k, nullptr, 0);
    bool done = false;
    k->AsAsync()->ComputeAsync(&ctx, [&] { done = true; });
    EXPECT_TRUE(done);
    *out = ctx.outputs()[0];
    return ctx.status();
  }

  Graph g_;
  Device device_{kWorker, "CPU"};
  FakeRendezvous rendezvous_;
};

TEST_F(SendRecvTest, OpDefsHaveTensorFlowsAttrs) {
  const OpDef* send = OpRegistry::Global()->LookUp("_Send");
  const OpDef* recv = OpRegistry::Global()->LookUp("_Recv");
  ASSERT_NE(send, nullptr);
  ASSERT_NE(recv, nullptr);
  for (const char* a :
       {"T", "tensor_name", "send_device", "send_device_incarnation", "recv_device", "client_terminated"})
    EXPECT_NE(send->FindAttr(a), nullptr) << a;
  for (const char* a :
       {"tensor_type", "tensor_name", "send_device", "send_device_incarnation", "recv_device", "client_terminated"})
    EXPECT_NE(recv->FindAttr(a), nullptr) << a;
  EXPECT_TRUE(send->is_stateful);
  EXPECT_TRUE(recv->is_stateful);
  ASSERT_EQ(send->inputs.size(), 1u);
  EXPECT_TRUE(send->outputs.empty());
  ASSERT_EQ(recv->outputs.size(), 1u);
  EXPECT_TRUE(recv->inputs.empty());
}

TEST_F(SendRecvTest, SendPutsTheValueUnderTheKeyOfItsAttrs) {
  auto k = Kernel("_Send", PairAttrs(), DT_FLOAT);
  ASSERT_NE(k, nullptr);
  TensorValue in;
  in.tensor = Tensor(2.5f);
  ASSERT_TRUE(RunSend(k.get(), in, &rendezvous_).ok());
  ASSERT_EQ(rendezvous_.sent.count(ExpectedKey()), 1u);
  EXPECT_EQ(rendezvous_.sent[ExpectedKey()].value.scalar<float>(), 2.5f);
  EXPECT_FALSE(rendezvous_.sent[ExpectedKey()].is_dead);
}

TEST_F(SendRecvTest, IncarnationIsTheFullSixtyFourBits) {
  // The attr is an int64; incarnations above 2^63 arrive negative and mean the same bits.
  uint64_t big = 0xfedcba9876543210ULL;
  auto k = Kernel("_Send", PairAttrs(static_cast<int64_t>(big)), DT_FLOAT);
  ASSERT_NE(k, nullptr);
  TensorValue in;
  in.tensor = Tensor(1.0f);
  ASSERT_TRUE(RunSend(k.get(), in, &rendezvous_).ok());
  EXPECT_EQ(rendezvous_.sent.count(ExpectedKey(big)), 1u);
}

TEST_F(SendRecvTest, DeadInputIsSentDead) {
  auto k = Kernel("_Send", PairAttrs(), DT_FLOAT);
  ASSERT_NE(k, nullptr);
  TensorValue in;
  in.is_dead = true;
  ASSERT_TRUE(RunSend(k.get(), in, &rendezvous_).ok());
  EXPECT_TRUE(rendezvous_.sent[ExpectedKey()].is_dead);
}

TEST_F(SendRecvTest, RecvOutputsTheValue) {
  rendezvous_.sent[ExpectedKey()] = {Tensor(int32_t{9}), false};
  AttrMap attrs = PairAttrs();
  attrs["tensor_type"] = DT_INT32;
  auto k = Kernel("_Recv", attrs);
  ASSERT_NE(k, nullptr);
  TensorValue out;
  ASSERT_TRUE(RunRecv(k.get(), &rendezvous_, &out).ok());
  EXPECT_FALSE(out.is_dead);
  EXPECT_EQ(out.tensor.scalar<int32_t>(), 9);
}

TEST_F(SendRecvTest, RecvOfADeadValueOutputsDead) {
  rendezvous_.sent[ExpectedKey()] = {Tensor(), true};
  AttrMap attrs = PairAttrs();
  attrs["tensor_type"] = DT_FLOAT;
  auto k = Kernel("_Recv", attrs);
  ASSERT_NE(k, nullptr);
  TensorValue out;
  ASSERT_TRUE(RunRecv(k.get(), &rendezvous_, &out).ok());
  EXPECT_TRUE(out.is_dead);
}

TEST_F(SendRecvTest, RecvOfTheWrongTypeIsAnError) {
  rendezvous_.sent[ExpectedKey()] = {Tensor(1.0f), false};
  AttrMap attrs = PairAttrs();
  attrs["tensor_type"] = DT_INT32;
  auto k = Kernel("_Recv", attrs);
  ASSERT_NE(k, nullptr);
  TensorValue out;
  Status s = RunRecv(k.get(), &rendezvous_, &out);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("int32"));
}

TEST_F(SendRecvTest, RendezvousErrorsReachTheKernel) {
  rendezvous_.recv_error = errors::Aborted("peer died");
  AttrMap attrs = PairAttrs();
  attrs["tensor_type"] = DT_FLOAT;
  auto recv = Kernel("_Recv", attrs);
  ASSERT_NE(recv, nullptr);
  TensorValue out;
  Status s = RunRecv(recv.get(), &rendezvous_, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_THAT(std::string(s.message()), HasSubstr("peer died"));

  rendezvous_.send_error = errors::Aborted("step over");
  auto send = Kernel("_Send", PairAttrs(), DT_FLOAT);
  ASSERT_NE(send, nullptr);
  TensorValue in;
  in.tensor = Tensor(1.0f);
  EXPECT_EQ(RunSend(send.get(), in, &rendezvous_).code(), absl::StatusCode::kAborted);
}

TEST_F(SendRecvTest, MissingRendezvousIsInternalNamingTheNode) {
  auto send = Kernel("_Send", PairAttrs(), DT_FLOAT);
  ASSERT_NE(send, nullptr);
  TensorValue in;
  in.tensor = Tensor(1.0f);
  Status s = RunSend(send.get(), in, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'send'"));

  AttrMap attrs = PairAttrs();
  attrs["tensor_type"] = DT_FLOAT;
  auto recv = Kernel("_Recv", attrs);
  ASSERT_NE(recv, nullptr);
  TensorValue out;
  s = RunRecv(recv.get(), nullptr, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'recv'"));
}

TEST_F(SendRecvTest, MissingAttrsAreRejected) {
  NodeSpec spec;
  spec.name = "recv";
  spec.op = "_Recv";
  spec.attrs = {{"tensor_type", DT_FLOAT}, {"tensor_name", std::string("e")}};
  EXPECT_FALSE(g_.AddNode(std::move(spec)).ok());
}

}  // namespace
}  // namespace dflow
