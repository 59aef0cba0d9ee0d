// Buffer forwarding through the executor: a kernel may write its output into an input's buffer
// only when the input slot holds that buffer alone — never into a fed tensor, a fetched
// value, a variable or a constant, which others still read.
#include <mutex>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/graph_def.h"
#include "gtest/gtest.h"
#include "ops/register_all.h"
#include "proto/graph.pb.h"
#include "runtime/direct_session.h"
#include "runtime/executor_test_util.h"
#include "runtime/local_device.h"

namespace dflow {
namespace {

using executor_test::Add;

// y = x + 1 in x's buffer when it may be taken; `forwarded` says whether it was.
class ProbeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    int from = -2;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &y, &from));
    const float* in = x.data<float>();
    float* out = y->data<float>();
    for (int64_t i = 0; i < x.NumElements(); ++i) out[i] = in[i] + 1;
    ctx->set_output(1, Tensor(from == 0));
  }
};

void RegisterProbe() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterAllOps();
    RegisterDirectSessionFactory();
    RegisterOp(OpDefBuilder("TestForwardProbe")
                   .Input("x: float")
                   .Output("y: float")
                   .Output("forwarded: bool")
                   .SetShapeFn([](InferenceContext* c) {
                     c->set_output(0, c->input(0));
                     c->set_output(1, PartialTensorShape{});
                     return absl::OkStatus();
                   }));
    RegisterKernel<ProbeOp>(KernelBuilder("TestForwardProbe"));
  });
}

std::unique_ptr<Session> MakeSession(const Graph& g) {
  proto::GraphDef def;
  ExportGraphDef(g, &def);
  auto session = NewDirectSession(SessionOptions(), {LocalCpuDevice()});
  EXPECT_TRUE(session->Create(def).ok());
  return session;
}

Tensor Floats(std::vector<float> v) { return Tensor::FromValues<float>(v, TensorShape{int64_t(v.size())}).value(); }

class BufferForwardingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterProbe();
    x_ = Add(&g_, "x", "Placeholder", {}, {{"dtype", DT_FLOAT}});
    neg_ = Add(&g_, "neg", "Neg", {{x_, 0}});
    Add(&g_, "probe", "TestForwardProbe", {{neg_, 0}});
  }
  Graph g_;
  Node* x_ = nullptr;
  Node* neg_ = nullptr;
};

TEST_F(BufferForwardingTest, TheSoleConsumerOfAValueWritesInPlace) {
  auto session = MakeSession(g_);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"x", Floats({1, 2, 3})}}, {"probe:0", "probe:1"}, {}, &out).ok());
  EXPECT_EQ(out[0].ToString(), "[0 -1 -2]");
  EXPECT_TRUE(out[1].scalar<bool>());
}

TEST_F(BufferForwardingTest, AFetchedValueIsNotOverwritten) {
  auto session = MakeSession(g_);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"x", Floats({1, 2, 3})}}, {"neg:0", "probe:0", "probe:1"}, {}, &out).ok());
  EXPECT_EQ(out[0].ToString(), "[-1 -2 -3]");
  EXPECT_EQ(out[1].ToString(), "[0 -1 -2]");
  EXPECT_FALSE(out[2].scalar<bool>());
}

TEST_F(BufferForwardingTest, AFedTensorIsNotOverwritten) {
  Add(&g_, "probe_x", "TestForwardProbe", {{x_, 0}});
  auto session = MakeSession(g_);
  Tensor x = Floats({5, 6});
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"x", x}}, {"probe_x:0", "probe_x:1"}, {}, &out).ok());
  EXPECT_EQ(out[0].ToString(), "[6 7]");
  EXPECT_FALSE(out[1].scalar<bool>());
  EXPECT_EQ(x.ToString(), "[5 6]");
}

TEST_F(BufferForwardingTest, ConstantsAndVariablesAreNotOverwritten) {
  Node* c = Add(&g_, "c", "Const", {}, {{"value", Floats({1, 2})}, {"dtype", DT_FLOAT}});
  Add(&g_, "probe_c", "TestForwardProbe", {{c, 0}});
  Node* v = Add(&g_, "v", "VariableV2", {}, {{"dtype", DT_FLOAT}, {"shape", PartialTensorShape({2})}});
  Add(&g_, "init", "Assign", {{v, 0}, {c, 0}});
  Add(&g_, "probe_v", "TestForwardProbe", {{v, 0}});
  auto session = MakeSession(g_);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE(session->Run({}, {"probe_c:0", "probe_c:1", "probe_v:0", "probe_v:1"}, {}, &out).ok());
    EXPECT_EQ(out[0].ToString(), "[2 3]") << "run " << run;
    EXPECT_FALSE(out[1].scalar<bool>());
    EXPECT_EQ(out[2].ToString(), "[2 3]") << "run " << run;
    EXPECT_FALSE(out[3].scalar<bool>());
  }
  ASSERT_TRUE(session->Run({}, {"v:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].ToString(), "[1 2]");
}

TEST_F(BufferForwardingTest, AValueWithTwoConsumersIsSharedUntilOneIsDone) {
  // relu and probe both read neg: whichever runs first must leave neg intact for the other.
  Add(&g_, "relu", "Relu", {{neg_, 0}});
  auto session = MakeSession(g_);
  for (int run = 0; run < 20; ++run) {
    std::vector<Tensor> out;
    ASSERT_TRUE(session->Run({{"x", Floats({1, -2, 3})}}, {"relu:0", "probe:0"}, {}, &out).ok());
    EXPECT_EQ(out[0].ToString(), "[0 2 0]");
    EXPECT_EQ(out[1].ToString(), "[0 3 -2]");
  }
}

// A Const hands its consumers its own tensor, read in place (no copy, no reference counting):
// every consumer sees the value, step after step, none may write into it, and a fetched constant
// stays valid after the session is gone.
TEST_F(BufferForwardingTest, AConstantIsReadInPlaceByEveryConsumer) {
  Node* c = Add(&g_, "c", "Const", {}, {{"value", Floats({1, 2})}, {"dtype", DT_FLOAT}});
  Node* sum = c;
  for (int i = 0; i < 50; ++i) sum = Add(&g_, "sum" + std::to_string(i), "Add", {{sum, 0}, {c, 0}});
  Add(&g_, "probe_c", "TestForwardProbe", {{c, 0}});
  Add(&g_, "neg_c", "Neg", {{c, 0}});
  Tensor fetched;
  {
    auto session = MakeSession(g_);
    for (int run = 0; run < 3; ++run) {
      std::vector<Tensor> out;
      ASSERT_TRUE(session->Run({}, {"sum49:0", "probe_c:0", "probe_c:1", "neg_c:0", "c:0"}, {}, &out).ok());
      EXPECT_EQ(out[0].ToString(), "[51 102]") << "run " << run;
      EXPECT_EQ(out[1].ToString(), "[2 3]");
      EXPECT_FALSE(out[2].scalar<bool>());
      EXPECT_EQ(out[3].ToString(), "[-1 -2]");
      EXPECT_EQ(out[4].ToString(), "[1 2]");
      fetched = out[4];
    }
  }
  EXPECT_EQ(fetched.ToString(), "[1 2]");
}

// A Const with a control input is dead when that input is: only Consts without control inputs
// have their value bound into their consumers' slots before the step starts.
TEST_F(BufferForwardingTest, AConstantWithADeadControlInputMakesItsConsumerDead) {
  Node* p = Add(&g_, "p", "Placeholder", {}, {{"dtype", DT_BOOL}});
  Node* sw = Add(&g_, "sw", "Switch", {{x_, 0}, {p, 0}});
  Node* when_true = Add(&g_, "when_true", "Identity", {{sw, 1}});  // dead when p is false
  NodeSpec c;
  c.name = "c";
  c.op = "Const";
  c.attrs = {{"value", Floats({2, 2})}, {"dtype", DT_FLOAT}};
  c.control_inputs = {when_true};
  auto cn = g_.AddNode(std::move(c));
  ASSERT_TRUE(cn.ok());
  Add(&g_, "y", "Add", {{*cn, 0}, {x_, 0}});
  auto session = MakeSession(g_);
  for (int run = 0; run < 4; ++run) {
    std::vector<Tensor> out;
    Status s = session->Run({{"x", Floats({1, 3})}, {"p", Tensor(true)}}, {"y:0"}, {}, &out);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(out[0].ToString(), "[3 5]") << "run " << run;
    s = session->Run({{"x", Floats({1, 3})}, {"p", Tensor(false)}}, {"y:0"}, {}, &out);
    EXPECT_FALSE(s.ok()) << "y is dead when p is false, yet it has the value " << out[0].ToString();
  }
}

}  // namespace
}  // namespace dflow
