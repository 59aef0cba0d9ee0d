// BiasAdd and BiasAddGrad against naive loops in both data formats, bad inputs and numerical
// gradient checks.
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

// The channel of flat element i: the last dim (NHWC) or dim 1 (NCHW).
int64_t ChannelOf(const TensorShape& s, const std::string& format, int64_t i) {
  if (format == "NHWC") return i % s.dim_size(s.dims() - 1);
  int64_t inner = 1;
  for (int d = 2; d < s.dims(); ++d) inner *= s.dim_size(d);
  return (i / inner) % s.dim_size(1);
}

TEST(BiasAddTest, ValuesInBothFormats) {
  std::mt19937 rng(1);
  for (const std::string format : {"NHWC", "NCHW"}) {
    for (const TensorShape& s : {TensorShape{3, 4}, TensorShape{2, 3, 4}, TensorShape{2, 3, 2, 5}}) {
      SCOPED_TRACE(format + " " + s.DebugString());
      const int64_t c = format == "NHWC" ? s.dim_size(s.dims() - 1) : s.dim_size(1);
      Tensor value = Random<double>(s, &rng), bias = Random<double>(TensorShape{c}, &rng);
      auto out = RunOp("BiasAdd", {value, bias}, {{"data_format", format}});
      ASSERT_EQ(out.size(), 1u);
      std::vector<double> v = ToDoubles(value), b = ToDoubles(bias), want(v.size());
      std::vector<double> grad_want(c, 0.0);
      for (size_t i = 0; i < v.size(); ++i) {
        want[i] = v[i] + b[ChannelOf(s, format, i)];
        grad_want[ChannelOf(s, format, i)] += v[i];
      }
      ExpectClose(out[0], want, s, 1e-15);
      auto grad = RunOp("BiasAddGrad", {value}, {{"data_format", format}});
      ASSERT_EQ(grad.size(), 1u);
      ExpectClose(grad[0], grad_want, TensorShape{c}, 1e-13);
    }
  }
}

// Float NHWC sums over many rows (summed in blocks of rows: several blocks and a partial one)
// stay close to the exact sums.
TEST(BiasAddGradTest, FloatOverManyRows) {
  std::mt19937 rng(3);
  const TensorShape s{3, 37, 29, 5};  // 3219 rows of 5 channels
  Tensor value = Random<float>(s, &rng);
  const std::vector<double> v = ToDoubles(value);
  std::vector<double> want(5, 0.0);
  for (size_t i = 0; i < v.size(); ++i) want[i % 5] += v[i];
  auto grad = RunOp("BiasAddGrad", {value});
  ASSERT_EQ(grad.size(), 1u);
  ExpectClose(grad[0], want, TensorShape{5}, 1e-5);
}

TEST(BiasAddTest, FloatAndEmpty) {
  auto out = RunOp("BiasAdd", {testing::MakeTensor<float>({1, 2, 3, 4}, TensorShape{2, 2}),
                               testing::MakeTensor<float>({10, 20}, TensorShape{2})});
  ASSERT_EQ(out.size(), 1u);
  ExpectClose(out[0], {11, 22, 13, 24}, TensorShape{2, 2}, 0);
  out = RunOp("BiasAdd", {Tensor(DT_FLOAT, TensorShape{0, 3}), Tensor(DT_FLOAT, TensorShape{3})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (TensorShape{0, 3}));
  out = RunOp("BiasAddGrad", {Tensor(DT_FLOAT, TensorShape{0, 3})});
  ASSERT_EQ(out.size(), 1u);
  ExpectClose(out[0], {0, 0, 0}, TensorShape{3}, 0);
}

TEST(BiasAddTest, BadInputs) {
  Status s = RunError("BiasAdd", {Tensor(DT_FLOAT, TensorShape{2, 3}), Tensor(DT_FLOAT, TensorShape{2})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("[2,3]"));
  EXPECT_EQ(RunError("BiasAdd", {Tensor(DT_FLOAT, TensorShape{3}), Tensor(DT_FLOAT, TensorShape{3})}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RunError("BiasAdd", {Tensor(DT_FLOAT, TensorShape{2, 3}), Tensor(DT_FLOAT, TensorShape{1, 3})}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RunError("BiasAdd", {Tensor(DT_FLOAT, TensorShape{2, 3}), Tensor(DT_FLOAT, TensorShape{3})},
                     {{"data_format", "NCWH"}})
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RunError("BiasAddGrad", {Tensor(DT_FLOAT, TensorShape{3})}).code(), absl::StatusCode::kInvalidArgument);
  // Unknown static shapes: the kernel checks.
  auto runner = testing::KernelRunner::Create("BiasAdd", {DT_FLOAT, DT_FLOAT}, {{"data_format", "NCHW"}});
  ASSERT_TRUE(runner.ok()) << runner.status();
  auto r = (*runner)->Run({Tensor(DT_FLOAT, TensorShape{2, 3, 4}), Tensor(DT_FLOAT, TensorShape{4})});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("BiasAdd 'node'"));
  auto grad_runner = testing::KernelRunner::Create("BiasAddGrad", {DT_FLOAT});
  ASSERT_TRUE(grad_runner.ok());
  EXPECT_EQ((*grad_runner)->Run({Tensor(1.0f)}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(BiasAddGradTest, NumericalGradients) {
  std::mt19937 rng(3);
  for (const std::string format : {"NHWC", "NCHW"}) {
    Tensor value = Random<double>(TensorShape{2, 3, 2}, &rng);
    const int64_t c = format == "NHWC" ? 2 : 3;
    EXPECT_LT(OpGradientError("BiasAdd", {value, Random<double>(TensorShape{c}, &rng)}, {{"data_format", format}}),
              1e-9)
        << format;
    EXPECT_LT(OpGradientError("BiasAddGrad", {value}, {{"data_format", format}}), 1e-9) << format;
  }
  EXPECT_LT(OpGradientError("BiasAdd", {Random<float>(TensorShape{3, 2}, &rng), Random<float>(TensorShape{2}, &rng)},
                            {}, {}, {0}, 1e-2),
            1e-3);
}

}  // namespace
}  // namespace dflow
