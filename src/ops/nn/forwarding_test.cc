// Element-wise kernels (nn activations, BiasAdd, the cwise math ops) that write into an input's
// buffer when nobody else holds it (OpKernelContext::forward_input_or_allocate_output): the
// values are the same either way, the buffer is reused only when the input slot is its sole
// holder, and only for an input of the output's type and element count.
#include "framework/op_kernel.h"
#include "gtest/gtest.h"
#include "ops/math/kernel_runner_test_util.h"
#include "ops/testing/kernel_test_util.h"

namespace dflow {
namespace {

using testing::KernelRunner;
using testing::MakeTensor;

TensorShape S(std::initializer_list<int64_t> d) { return TensorShape(d); }

// Inputs handed over to the kernel runner, without the copy an initializer list would make.
template <typename... Ts>
std::vector<Tensor> Give(Ts&&... t) {
  std::vector<Tensor> v;
  (v.push_back(std::forward<Ts>(t)), ...);
  return v;
}

TEST(ForwardingTest, ReluWritesIntoItsInputWhenItIsTheSoleHolder) {
  auto r = KernelRunner::Create("Relu", {DT_FLOAT}).value();
  Tensor x = MakeTensor<float>({-1, 2, -3, 4, 0.5f, -0.5f}, S({2, 3}));
  const void* buffer = x.raw_data();
  auto out = r->Run1(Give(std::move(x)));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->raw_data(), buffer);
  EXPECT_EQ(out->shape(), S({2, 3}));
  EXPECT_EQ(out->ToString(), "[[0 2 0] [4 0.5 0]]");
}

TEST(ForwardingTest, ReluLeavesAnInputSomeoneElseHoldsAlone) {
  auto r = KernelRunner::Create("Relu", {DT_FLOAT}).value();
  Tensor x = MakeTensor<float>({-1, 2, -3}, S({3}));
  auto out = r->Run1({x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(out->SharesBufferWith(x));
  EXPECT_EQ(out->ToString(), "[0 2 0]");
  EXPECT_EQ(x.ToString(), "[-1 2 -3]");
}

TEST(ForwardingTest, ReluGradTakesTheGradientsOrElseTheFeatures) {
  auto r = KernelRunner::Create("ReluGrad", {DT_FLOAT, DT_FLOAT}).value();
  Tensor g = MakeTensor<float>({1, 2, 3, 4}, S({4}));
  Tensor f = MakeTensor<float>({-1, 1, 0, 5}, S({4}));
  // Both held by the test: a fresh buffer, inputs intact.
  auto out = r->Run1({g, f});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->ToString(), "[0 2 0 4]");
  EXPECT_FALSE(out->SharesBufferWith(g));
  EXPECT_FALSE(out->SharesBufferWith(f));
  EXPECT_EQ(g.ToString(), "[1 2 3 4]");
  EXPECT_EQ(f.ToString(), "[-1 1 0 5]");
  // Only the features are free: they are reused.
  Tensor f2 = f.DeepCopy();
  const void* fbuf = f2.raw_data();
  out = r->Run1(Give(g, std::move(f2)));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->raw_data(), fbuf);
  EXPECT_EQ(out->ToString(), "[0 2 0 4]");
  // Both free: the gradients are reused.
  Tensor g2 = g.DeepCopy();
  const void* gbuf = g2.raw_data();
  out = r->Run1(Give(std::move(g2), f.DeepCopy()));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->raw_data(), gbuf);
  EXPECT_EQ(out->ToString(), "[0 2 0 4]");
}

TEST(ForwardingTest, BiasAddWritesIntoTheValue) {
  auto r = KernelRunner::Create("BiasAdd", {DT_FLOAT, DT_FLOAT}).value();
  Tensor bias = MakeTensor<float>({10, 20}, S({2}));
  Tensor value = MakeTensor<float>({1, 2, 3, 4, 5, 6}, S({3, 2}));
  const void* buffer = value.raw_data();
  auto out = r->Run1(Give(std::move(value), bias));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->raw_data(), buffer);
  EXPECT_EQ(out->ToString(), "[[11 22] [13 24] [15 26]]");
  EXPECT_EQ(bias.ToString(), "[10 20]");
}

TEST(CwiseForwardingTest, AddTakesWhicheverOperandIsFree) {
  auto r = KernelRunner::Create("Add", {DT_FLOAT, DT_FLOAT}).value();
  Tensor x = MakeTensor<float>({1, 2, 3}, S({3}));
  Tensor y = MakeTensor<float>({10, 20, 30}, S({3}));
  // Both held by the test: a fresh buffer, the operands intact.
  auto out = r->Run1({x, y});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->ToString(), "[11 22 33]");
  EXPECT_FALSE(out->SharesBufferWith(x));
  EXPECT_FALSE(out->SharesBufferWith(y));
  EXPECT_EQ(x.ToString(), "[1 2 3]");
  EXPECT_EQ(y.ToString(), "[10 20 30]");
  // Only y is free: its buffer is reused.
  Tensor y2 = y.DeepCopy();
  const void* ybuf = y2.raw_data();
  out = r->Run1(Give(x, std::move(y2)));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->raw_data(), ybuf);
  EXPECT_EQ(out->ToString(), "[11 22 33]");
  EXPECT_EQ(x.ToString(), "[1 2 3]");
  // Both free: x's.
  Tensor x2 = x.DeepCopy();
  const void* xbuf = x2.raw_data();
  out = r->Run1(Give(std::move(x2), y.DeepCopy()));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->raw_data(), xbuf);
  EXPECT_EQ(out->ToString(), "[11 22 33]");
}

TEST(CwiseForwardingTest, ABroadcastScalarIsReadBeforeTheArrayIsOverwritten) {
  auto sub = KernelRunner::Create("Sub", {DT_FLOAT, DT_FLOAT}).value();
  Tensor x = MakeTensor<float>({5, 6, 7, 8}, S({2, 2}));
  const void* xbuf = x.raw_data();
  auto out = sub->Run1(Give(std::move(x), MakeTensor<float>({1}, S({}))));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->raw_data(), xbuf);
  EXPECT_EQ(out->ToString(), "[[4 5] [6 7]]");
  // Scalar first: the array operand (the second) is the one taken, never the scalar.
  Tensor y = MakeTensor<float>({1, 2, 3, 4}, S({2, 2}));
  const void* ybuf = y.raw_data();
  Tensor scalar = MakeTensor<float>({10}, S({}));
  const void* sbuf = scalar.raw_data();
  out = sub->Run1(Give(std::move(scalar), std::move(y)));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->raw_data(), ybuf);
  EXPECT_NE(out->raw_data(), sbuf);
  EXPECT_EQ(out->ToString(), "[[9 8] [7 6]]");
}

TEST(CwiseForwardingTest, OneTensorAsBothOperandsIsNotOverwritten) {
  auto mul = KernelRunner::Create("Mul", {DT_FLOAT, DT_FLOAT}).value();
  Tensor x = MakeTensor<float>({2, 3}, S({2}));
  auto out = mul->Run1({x, x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(out->SharesBufferWith(x));
  EXPECT_EQ(out->ToString(), "[4 9]");
  EXPECT_EQ(x.ToString(), "[2 3]");
}

TEST(CwiseForwardingTest, UnaryOpsWriteInPlaceAndComparisonsNever) {
  auto neg = KernelRunner::Create("Neg", {DT_FLOAT}).value();
  Tensor x = MakeTensor<float>({1, -2}, S({2}));
  const void* xbuf = x.raw_data();
  auto out = neg->Run1(Give(std::move(x)));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->raw_data(), xbuf);
  EXPECT_EQ(out->ToString(), "[-1 2]");
  // A bool result cannot live in a float buffer.
  auto less = KernelRunner::Create("Less", {DT_FLOAT, DT_FLOAT}).value();
  Tensor a = MakeTensor<float>({1, 5}, S({2}));
  const void* abuf = a.raw_data();
  out = less->Run1(Give(std::move(a), MakeTensor<float>({3, 3}, S({2}))));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NE(out->raw_data(), abuf);
  EXPECT_EQ(out->dtype(), DT_BOOL);
  EXPECT_EQ(out->ToString(), "[True False]");
}

// The conditions, on a context built by hand around a Relu kernel (float in, float out).
class ForwardConditionsTest : public ::testing::Test {
 protected:
  void SetUp() override { runner_ = KernelRunner::Create("Relu", {DT_FLOAT}).value(); }

  // Whether output 0 of shape `shape` took input 0's buffer.
  bool Forwards(TensorValue in, const TensorShape& shape) {
    StepParams step;
    OpKernelContext ctx(&step, runner_->kernel(), &in, 1);
    Tensor* out = nullptr;
    int from = -2;
    EXPECT_TRUE(ctx.forward_input_or_allocate_output({0}, 0, shape, &out, &from).ok());
    EXPECT_EQ(out->dtype(), DT_FLOAT);
    EXPECT_EQ(out->shape(), shape);
    EXPECT_EQ(from == 0, in.tensor.IsInitialized() && out->SharesBufferWith(in.tensor));
    return from == 0;
  }

  std::unique_ptr<KernelRunner> runner_;
};

TEST_F(ForwardConditionsTest, OnlyTheSoleHolder) {
  TensorValue alone;
  alone.tensor = Tensor(DT_FLOAT, S({2, 3}));
  EXPECT_TRUE(Forwards(std::move(alone), S({2, 3})));
  TensorValue held;
  held.tensor = Tensor(DT_FLOAT, S({2, 3}));
  Tensor other = held.tensor;
  EXPECT_FALSE(Forwards(std::move(held), S({2, 3})));
}

TEST_F(ForwardConditionsTest, ReshapesToTheOutputShape) {
  TensorValue v;
  v.tensor = Tensor(DT_FLOAT, S({6}));
  EXPECT_TRUE(Forwards(std::move(v), S({3, 2})));
}

TEST_F(ForwardConditionsTest, NotAcrossTypesSizesRefsOrDeadValues) {
  TensorValue wrong_type;
  wrong_type.tensor = Tensor(DT_INT32, S({4}));
  EXPECT_FALSE(Forwards(std::move(wrong_type), S({4})));
  TensorValue wrong_size;
  wrong_size.tensor = Tensor(DT_FLOAT, S({5}));
  EXPECT_FALSE(Forwards(std::move(wrong_size), S({4})));
  TensorValue ref;
  ref.ref = std::make_shared<Var>("v", DT_FLOAT, PartialTensorShape({4}));
  EXPECT_FALSE(Forwards(std::move(ref), S({4})));
  TensorValue dead;
  dead.tensor = Tensor(DT_FLOAT, S({4}));
  dead.is_dead = true;
  EXPECT_FALSE(Forwards(std::move(dead), S({4})));
  // A borrowed value (a Const's, read in place) belongs to its producer.
  Tensor constant(DT_FLOAT, S({4}));
  TensorValue borrowed;
  borrowed.borrowed = &constant;
  EXPECT_FALSE(Forwards(std::move(borrowed), S({4})));
}

}  // namespace
}  // namespace dflow
