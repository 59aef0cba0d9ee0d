// Softmax and LogSoftmax against a naive per-row computation, stability, bad inputs and
// numerical gradient checks.
#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "ops/nn/nn_grad_util.h"
#include "ops/nn/nn_test_util.h"

namespace dflow {
namespace {

using nn_testing::ExpectClose;
using nn_testing::OpGradientError;
using nn_testing::Random;
using nn_testing::RunError;
using nn_testing::RunOp;
using nn_testing::ToDoubles;

// Naive: exp(x) / sum(exp(x)) per row of the last dimension, in long double.
std::vector<double> NaiveSoftmax(const std::vector<double>& x, int64_t depth, bool log) {
  std::vector<double> out(x.size());
  for (size_t r = 0; r * depth < x.size(); ++r) {
    long double s = 0;
    for (int64_t j = 0; j < depth; ++j) s += std::exp((long double)x[r * depth + j]);
    for (int64_t j = 0; j < depth; ++j) {
      const long double e = std::exp((long double)x[r * depth + j]);
      out[r * depth + j] = static_cast<double>(log ? std::log(e / s) : e / s);
    }
  }
  return out;
}

template <typename T>
void CheckSoftmax(const TensorShape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  Tensor x = Random<T>(shape, &rng, -4, 4);
  const int64_t depth = shape.dim_size(shape.dims() - 1);
  for (bool log : {false, true}) {
    SCOPED_TRACE(absl::StrCat(log ? "LogSoftmax " : "Softmax ", shape.DebugString()));
    auto out = RunOp(log ? "LogSoftmax" : "Softmax", {x});
    ASSERT_EQ(out.size(), 1u);
    ExpectClose(out[0], NaiveSoftmax(ToDoubles(x), depth, log), shape, std::is_same_v<T, float> ? 1e-6 : 1e-14);
  }
}

TEST(SoftmaxOpsTest, ValuesForRanks1To3) {
  CheckSoftmax<double>(TensorShape{5}, 1);
  CheckSoftmax<double>(TensorShape{3, 4}, 2);
  CheckSoftmax<double>(TensorShape{2, 3, 6}, 3);
  CheckSoftmax<float>(TensorShape{7}, 4);
  CheckSoftmax<float>(TensorShape{4, 9}, 5);
}

TEST(SoftmaxOpsTest, HandComputedRow) {
  auto out = RunOp("Softmax", {testing::MakeTensor<double>({0.0, std::log(3.0)}, TensorShape{1, 2})});
  ASSERT_EQ(out.size(), 1u);
  ExpectClose(out[0], {0.25, 0.75}, TensorShape{1, 2}, 1e-14);
}

TEST(SoftmaxOpsTest, LargeLogitsDoNotOverflow) {
  Tensor x = testing::MakeTensor<float>({1000.f, 1001.f, -1000.f, 990.f}, TensorShape{1, 4});
  auto sm = RunOp("Softmax", {x});
  auto lsm = RunOp("LogSoftmax", {x});
  ASSERT_EQ(sm.size(), 1u);
  ASSERT_EQ(lsm.size(), 1u);
  std::vector<double> want = NaiveSoftmax({0.0, 1.0, -2000.0, -10.0}, 4, false);
  ExpectClose(sm[0], want, TensorShape{1, 4}, 1e-6);
  EXPECT_NEAR(lsm[0].flat<float>()[0], -std::log(1 + std::exp(1.0) + std::exp(-10.0)), 1e-5);
  EXPECT_TRUE(std::isfinite(lsm[0].flat<float>()[2]));
}

// A row whose maximum is infinite (a +inf, or all -inf) is NaN throughout, as TensorFlow's kernels
// give it (x - max is NaN at the maximum); a -inf among finite logits is a probability of 0.
TEST(SoftmaxOpsTest, RowsWithInfinitiesAsTensorFlow) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = testing::MakeTensor<double>({1, inf, 2, -inf, -inf, -inf, -inf, 0, 0}, TensorShape{3, 3});
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    auto y = RunOp(op, {x});
    ASSERT_EQ(y.size(), 1u);
    for (int j = 0; j < 6; ++j) EXPECT_TRUE(std::isnan(y[0].flat<double>()[j])) << op << " " << j;
    EXPECT_EQ(y[0].flat<double>()[6], std::string(op) == "Softmax" ? 0.0 : -inf) << op;
    EXPECT_NEAR(y[0].flat<double>()[7], std::string(op) == "Softmax" ? 0.5 : std::log(0.5), 1e-15) << op;
  }
}

TEST(SoftmaxOpsTest, EmptyInputs) {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (const TensorShape& s : {TensorShape{0, 3}, TensorShape{3, 0}}) {
      auto out = RunOp(op, {Tensor(DT_FLOAT, s)});
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].shape(), s);
    }
  }
}

TEST(SoftmaxOpsTest, ScalarsAreRejected) {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    Status s = RunError(op, {Tensor(1.0f)});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << op;
    EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr(">= 1 dimension"));
    // The kernel checks too when the rank is not known while building.
    auto runner = testing::KernelRunner::Create(op, {DT_FLOAT});
    ASSERT_TRUE(runner.ok()) << runner.status();
    EXPECT_EQ((*runner)->Run({Tensor(1.0f)}).status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(SoftmaxGradTest, NumericalGradients) {
  std::mt19937 rng(11);
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (const TensorShape& s : {TensorShape{6}, TensorShape{3, 4}, TensorShape{2, 2, 3}}) {
      EXPECT_LT(OpGradientError(op, {Random<double>(s, &rng, -2, 2)}), 1e-6) << op << " " << s.DebugString();
    }
    EXPECT_LT(OpGradientError(op, {Random<float>(TensorShape{3, 4}, &rng, -2, 2)}, {}, {}, {0}, 1e-2), 2e-3) << op;
  }
}

// Without the Sum op (it belongs to the math family) the gradients use 2-D views and MatMul
// with ones, which needs a static last dimension.
TEST(SoftmaxGradTest, MatMulPathWithoutSum) {
  SetLastAxisMayUseSumForTesting(false);
  std::mt19937 rng(12);
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (const TensorShape& s : {TensorShape{5}, TensorShape{2, 2, 3}}) {
      EXPECT_LT(OpGradientError(op, {Random<double>(s, &rng, -2, 2)}), 1e-6) << op << " " << s.DebugString();
    }
  }
  Tensor f = Random<double>(TensorShape{3, 4}, &rng), l = testing::MakeTensor<int32_t>({0, 3, 1}, TensorShape{3});
  EXPECT_LT(OpGradientError("SparseSoftmaxCrossEntropyWithLogits", {f}, {}, {l}, {0, 1}), 1e-6);
  // A last dimension unknown while building cannot be viewed as a matrix.
  auto err = MaxGradientError({Random<double>(TensorShape{2, 3}, &rng)},
                              [](GraphBuilder* b, const std::vector<NodeOut>& xs) {
                                // Reshaped by a shape computed at run time: static shape [?, ?].
                                NodeOut y = b->Op("Softmax", {b->Op("Reshape", {xs[0], b->Op("Shape", {xs[0]})})});
                                return std::vector<NodeOut>{y};
                              });
  EXPECT_FALSE(err.ok());
  SetLastAxisMayUseSumForTesting(true);
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.status().code(), absl::StatusCode::kUnimplemented) << err.status();
}

}  // namespace
}  // namespace dflow
