// SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits and L2Loss against naive
// loops, bad inputs (shapes, labels out of range) and numerical gradient checks.
#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "ops/nn/nn_test_util.h"

namespace dflow {
namespace {

using nn_testing::ExpectClose;
using nn_testing::OpGradientError;
using nn_testing::Random;
using nn_testing::RunError;
using nn_testing::RunOp;
using nn_testing::ToDoubles;
using ::testing::HasSubstr;

// Naive cross entropy: loss_r = -sum_j labels_rj * log(softmax_rj), backprop = softmax - labels.
void NaiveXent(const std::vector<double>& f, const std::vector<double>& l, int64_t batch, int64_t depth,
               std::vector<double>* loss, std::vector<double>* backprop) {
  loss->assign(batch, 0);
  backprop->assign(batch * depth, 0);
  for (int64_t r = 0; r < batch; ++r) {
    long double s = 0;
    for (int64_t j = 0; j < depth; ++j) s += std::exp((long double)f[r * depth + j]);
    for (int64_t j = 0; j < depth; ++j) {
      const long double p = std::exp((long double)f[r * depth + j]) / s;
      (*loss)[r] -= double(l[r * depth + j] * std::log(p));
      (*backprop)[r * depth + j] = double(p - l[r * depth + j]);
    }
  }
}

// Random label distributions: positive rows summing to 1.
template <typename T>
Tensor Distributions(int64_t batch, int64_t depth, std::mt19937* rng) {
  Tensor t = Random<T>(TensorShape{batch, depth}, rng, 0.05, 1);
  for (int64_t r = 0; r < batch; ++r) {
    double s = 0;
    for (int64_t j = 0; j < depth; ++j) s += t.flat<T>()[r * depth + j];
    for (int64_t j = 0; j < depth; ++j) t.flat<T>()[r * depth + j] = static_cast<T>(t.flat<T>()[r * depth + j] / s);
  }
  return t;
}

template <typename T>
void CheckXent(int64_t batch, int64_t depth, uint32_t seed) {
  std::mt19937 rng(seed);
  Tensor f = Random<T>(TensorShape{batch, depth}, &rng, -3, 3);
  Tensor l = Distributions<T>(batch, depth, &rng);
  auto out = RunOp("SoftmaxCrossEntropyWithLogits", {f, l});
  ASSERT_EQ(out.size(), 2u);
  std::vector<double> loss, backprop;
  NaiveXent(ToDoubles(f), ToDoubles(l), batch, depth, &loss, &backprop);
  const double tol = std::is_same_v<T, float> ? 2e-6 : 1e-13;
  ExpectClose(out[0], loss, TensorShape{batch}, tol);
  ExpectClose(out[1], backprop, TensorShape{batch, depth}, tol);
}

TEST(SoftmaxXentTest, Values) {
  CheckXent<double>(4, 5, 1);
  CheckXent<float>(3, 7, 2);
  CheckXent<double>(1, 1, 3);
}

TEST(SoftmaxXentTest, HandComputed) {
  // logits (0, log 3): softmax (1/4, 3/4); one-hot on class 1 gives loss -log(3/4).
  auto out = RunOp("SoftmaxCrossEntropyWithLogits",
                   {testing::MakeTensor<double>({0.0, std::log(3.0)}, TensorShape{1, 2}),
                    testing::MakeTensor<double>({0.0, 1.0}, TensorShape{1, 2})});
  ASSERT_EQ(out.size(), 2u);
  ExpectClose(out[0], {-std::log(0.75)}, TensorShape{1}, 1e-14);
  ExpectClose(out[1], {0.25, -0.25}, TensorShape{1, 2}, 1e-14);
}

TEST(SoftmaxXentTest, BadShapes) {
  Status s = RunError("SoftmaxCrossEntropyWithLogits",
                      {Tensor(DT_FLOAT, TensorShape{2, 3}), Tensor(DT_FLOAT, TensorShape{2, 4})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("[2,3]"));
  s = RunError("SoftmaxCrossEntropyWithLogits", {Tensor(DT_FLOAT, TensorShape{6}), Tensor(DT_FLOAT, TensorShape{6})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  auto runner = testing::KernelRunner::Create("SoftmaxCrossEntropyWithLogits", {DT_FLOAT, DT_FLOAT});
  ASSERT_TRUE(runner.ok()) << runner.status();
  auto r = (*runner)->Run({Tensor(DT_FLOAT, TensorShape{2, 3}), Tensor(DT_FLOAT, TensorShape{3, 2})});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("SoftmaxCrossEntropyWithLogits 'node'"));
}

// As TensorFlow's kernel: logits and labels broadcast against each other (a [1, n] row of labels
// for every example, or [b, 1] logits).
TEST(SoftmaxXentTest, BroadcastLabels) {
  Tensor logits = testing::MakeTensor<double>({0.0, std::log(3.0), std::log(3.0), 0.0}, TensorShape{2, 2});
  Tensor labels = testing::MakeTensor<double>({0.0, 1.0}, TensorShape{1, 2});
  auto out = RunOp("SoftmaxCrossEntropyWithLogits", {logits, labels});
  ASSERT_EQ(out.size(), 2u);
  ExpectClose(out[0], {-std::log(0.75), -std::log(0.25)}, TensorShape{2}, 1e-14);
  ExpectClose(out[1], {0.25, -0.25, 0.75, -0.75}, TensorShape{2, 2}, 1e-14);
  auto shapes = testing::InferShapes("SoftmaxCrossEntropyWithLogits", {logits, labels});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[1], PartialTensorShape({2, 2}));
  Status s = RunError("SoftmaxCrossEntropyWithLogits", {logits, Tensor(DT_DOUBLE, TensorShape{3, 2})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

TEST(SoftmaxXentTest, EmptyBatch) {
  auto out = RunOp("SoftmaxCrossEntropyWithLogits",
                   {Tensor(DT_FLOAT, TensorShape{0, 3}), Tensor(DT_FLOAT, TensorShape{0, 3})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), TensorShape{0});
  EXPECT_EQ(out[1].shape(), (TensorShape{0, 3}));
}

template <typename T, typename L>
void CheckSparseXent(int64_t batch, int64_t depth, uint32_t seed) {
  std::mt19937 rng(seed);
  Tensor f = Random<T>(TensorShape{batch, depth}, &rng, -3, 3);
  Tensor labels(DTypeOf<L>::value, TensorShape{batch});
  std::vector<double> onehot(batch * depth, 0.0);
  for (int64_t r = 0; r < batch; ++r) {
    labels.flat<L>()[r] = static_cast<L>(rng() % depth);
    onehot[r * depth + labels.flat<L>()[r]] = 1;
  }
  auto out = RunOp("SparseSoftmaxCrossEntropyWithLogits", {f, labels});
  ASSERT_EQ(out.size(), 2u);
  std::vector<double> loss, backprop;
  NaiveXent(ToDoubles(f), onehot, batch, depth, &loss, &backprop);
  const double tol = std::is_same_v<T, float> ? 2e-6 : 1e-13;
  ExpectClose(out[0], loss, TensorShape{batch}, tol);
  ExpectClose(out[1], backprop, TensorShape{batch, depth}, tol);
}

TEST(SparseSoftmaxXentTest, Values) {
  CheckSparseXent<double, int32_t>(5, 4, 1);
  CheckSparseXent<double, int64_t>(3, 6, 2);
  CheckSparseXent<float, int32_t>(4, 3, 3);
  CheckSparseXent<float, int64_t>(2, 8, 4);
}

// A -inf logit has probability 0; a row of -inf only has no softmax (NaN, as in TensorFlow).
TEST(SparseSoftmaxXentTest, InfiniteLogits) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor f = testing::MakeTensor<double>({0, -inf, 1, -inf, -inf, -inf}, TensorShape{2, 3});
  auto out = RunOp("SparseSoftmaxCrossEntropyWithLogits", {f, testing::MakeTensor<int32_t>({2, 0}, TensorShape{2})});
  ASSERT_EQ(out.size(), 2u);
  const double e = std::exp(1.0), p0 = 1 / (1 + e), p2 = e / (1 + e);
  EXPECT_NEAR(out[0].flat<double>()[0], -std::log(p2), 1e-15);
  EXPECT_NEAR(out[1].flat<double>()[0], p0, 1e-15);
  EXPECT_EQ(out[1].flat<double>()[1], 0.0);
  EXPECT_NEAR(out[1].flat<double>()[2], p2 - 1, 1e-15);
  EXPECT_TRUE(std::isnan(out[0].flat<double>()[1]));
}

TEST(SparseSoftmaxXentTest, LabelOutOfRangeIsInvalidArgument) {
  Tensor f(DT_FLOAT, TensorShape{2, 3});
  for (float& v : f.flat<float>()) v = 0;
  for (int64_t bad : {int64_t{3}, int64_t{-1}, int64_t{1} << 40}) {
    Tensor l64 = testing::MakeTensor<int64_t>({0, bad}, TensorShape{2});
    Status s = RunError("SparseSoftmaxCrossEntropyWithLogits", {f, l64});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(s.message()), HasSubstr(absl::StrCat("label value of ", bad)));
    EXPECT_THAT(std::string(s.message()), HasSubstr("[0, 3)"));
  }
  Status s = RunError("SparseSoftmaxCrossEntropyWithLogits", {f, testing::MakeTensor<int32_t>({7, 0}, TensorShape{2})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  // No classes at all: every label is out of range.
  s = RunError("SparseSoftmaxCrossEntropyWithLogits",
               {Tensor(DT_FLOAT, TensorShape{1, 0}), testing::MakeTensor<int32_t>({0}, TensorShape{1})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

TEST(SparseSoftmaxXentTest, BadShapes) {
  Tensor f(DT_FLOAT, TensorShape{2, 3});
  EXPECT_EQ(RunError("SparseSoftmaxCrossEntropyWithLogits",
                     {f, testing::MakeTensor<int32_t>({0, 1, 2}, TensorShape{3})})
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RunError("SparseSoftmaxCrossEntropyWithLogits",
                     {f, testing::MakeTensor<int32_t>({0, 1}, TensorShape{1, 2})})
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(
      RunError("SparseSoftmaxCrossEntropyWithLogits", {f, testing::MakeTensor<float>({0, 1}, TensorShape{2})}).ok());
  auto runner = testing::KernelRunner::Create("SparseSoftmaxCrossEntropyWithLogits", {DT_FLOAT, DT_INT32});
  ASSERT_TRUE(runner.ok()) << runner.status();
  auto r = (*runner)->Run({Tensor(DT_FLOAT, TensorShape{6}), testing::MakeTensor<int32_t>({0}, TensorShape{1})});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(L2LossTest, Values) {
  auto out = RunOp("L2Loss", {testing::MakeTensor<double>({1, -2, 3, 0.5}, TensorShape{2, 2})});
  ASSERT_EQ(out.size(), 1u);
  ExpectClose(out[0], {(1 + 4 + 9 + 0.25) / 2}, TensorShape{}, 1e-15);
  out = RunOp("L2Loss", {Tensor(DT_FLOAT, TensorShape{0, 4})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].scalar<float>(), 0.0f);
  out = RunOp("L2Loss", {Tensor(3.0f)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].scalar<float>(), 4.5f);
}

TEST(LossGradTest, SoftmaxXentBothInputsAndOutputs) {
  std::mt19937 rng(5);
  Tensor f = Random<double>(TensorShape{3, 4}, &rng, -2, 2);
  Tensor l = Distributions<double>(3, 4, &rng);
  EXPECT_LT(OpGradientError("SoftmaxCrossEntropyWithLogits", {f, l}, {}, {}, {0}), 1e-6);
  EXPECT_LT(OpGradientError("SoftmaxCrossEntropyWithLogits", {f, l}, {}, {}, {1}), 1e-6);
  EXPECT_LT(OpGradientError("SoftmaxCrossEntropyWithLogits", {f, l}, {}, {}, {0, 1}), 1e-6);
  EXPECT_LT(OpGradientError("SoftmaxCrossEntropyWithLogits", {nn_testing::Cast<float>(f), nn_testing::Cast<float>(l)},
                            {}, {}, {0}, 1e-2),
            2e-3);
}

TEST(LossGradTest, SparseSoftmaxXent) {
  std::mt19937 rng(6);
  Tensor f = Random<double>(TensorShape{4, 5}, &rng, -2, 2);
  Tensor labels = testing::MakeTensor<int64_t>({4, 0, 2, 2}, TensorShape{4});
  EXPECT_LT(OpGradientError("SparseSoftmaxCrossEntropyWithLogits", {f}, {}, {labels}, {0}), 1e-6);
  EXPECT_LT(OpGradientError("SparseSoftmaxCrossEntropyWithLogits", {f}, {}, {labels}, {0, 1}), 1e-6);
  Tensor labels32 = testing::MakeTensor<int32_t>({1, 3, 0, 4}, TensorShape{4});
  EXPECT_LT(OpGradientError("SparseSoftmaxCrossEntropyWithLogits", {nn_testing::Cast<float>(f)}, {}, {labels32}, {0},
                            1e-2),
            2e-3);
}

TEST(LossGradTest, L2Loss) {
  std::mt19937 rng(7);
  EXPECT_LT(OpGradientError("L2Loss", {Random<double>(TensorShape{3, 2}, &rng)}), 1e-9);
  EXPECT_LT(OpGradientError("L2Loss", {Random<float>(TensorShape{5}, &rng)}, {}, {}, {0}, 1e-2), 1e-3);
}

}  // namespace
}  // namespace dflow
