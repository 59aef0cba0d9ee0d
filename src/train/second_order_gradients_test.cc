// Second derivatives through the common layers: the gradient graph that AddGradients builds is
// differentiated again and checked against central differences of the first gradient (so every
// gradient function on the way, and the gradient kernels they use, must be differentiable).
#include <functional>
#include <random>

#include "graph/gradients.h"
#include "gtest/gtest.h"
#include "ops/register_all.h"
#include "train/gradient_checker.h"

namespace dflow {
namespace {

using Build = std::function<NodeOut(GraphBuilder* b, const std::vector<NodeOut>& xs)>;

Tensor RandomTensor(const TensorShape& shape, std::mt19937* rng, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> u(lo, hi);
  Tensor t(DT_DOUBLE, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.flat<double>()[i] = u(*rng);
  return t;
}

// The largest error of d(dy/dxs)/dxs against central differences of dy/dxs.
double SecondOrderError(const std::vector<Tensor>& xs, const Build& build) {
  RegisterAllOps();
  auto err = MaxGradientError(
      xs,
      [&](GraphBuilder* b, const std::vector<NodeOut>& in) {
        NodeOut y = build(b, in);
        if (!b->ok()) return std::vector<NodeOut>{};
        auto g = AddGradients(b->graph(), {y}, in);
        if (!g.ok()) {
          b->SetError(g.status());
          return std::vector<NodeOut>{};
        }
        return *g;
      },
      1e-5);
  EXPECT_TRUE(err.ok()) << err.status();
  return err.ok() ? *err : 1e9;
}

NodeOut SumAll(GraphBuilder* b, NodeOut x, int rank) {
  std::vector<int32_t> axes;
  for (int i = 0; i < rank; ++i) axes.push_back(i);
  Tensor t = Tensor::FromValues<int32_t>(axes, TensorShape{rank}).value();
  return b->Op("Sum", {x, b->Const(t)});
}

TEST(SecondOrderGradientTest, DenseLayerWithActivations) {
  std::mt19937 rng(1);
  for (const char* act : {"Tanh", "Sigmoid", "Elu", "Selu", "Softplus", "Relu"}) {
    EXPECT_LT(SecondOrderError({RandomTensor({2, 3}, &rng), RandomTensor({3, 4}, &rng), RandomTensor({4}, &rng)},
                               [&](GraphBuilder* b, const std::vector<NodeOut>& x) {
                                 NodeOut h = b->Op("BiasAdd", {b->Op("MatMul", {x[0], x[1]}), x[2]});
                                 NodeOut a = b->Op(act, {h});
                                 return SumAll(b, b->Op("Mul", {a, a}), 2);
                               }),
              1e-6)
        << act;
  }
}

TEST(SecondOrderGradientTest, ElementwiseAndReductions) {
  std::mt19937 rng(2);
  Tensor pos = RandomTensor({2, 3}, &rng, 0.5, 2);
  for (const char* op : {"Exp", "Log", "Sqrt", "Rsqrt", "Reciprocal", "Square", "Log1p"}) {
    EXPECT_LT(SecondOrderError({pos}, [&](GraphBuilder* b,
                                          const std::vector<NodeOut>& x) { return SumAll(b, b->Op(op, {x[0]}), 2); }),
              1e-6)
        << op;
  }
  Tensor a = RandomTensor({2, 3}, &rng, 0.5, 2), c = RandomTensor({3}, &rng, 0.5, 2);
  for (const char* op : {"Mul", "RealDiv", "Pow", "SquaredDifference", "AddV2", "Sub"}) {
    EXPECT_LT(SecondOrderError({a, c},
                               [&](GraphBuilder* b, const std::vector<NodeOut>& x) {
                                 NodeOut y = b->Op(op, {x[0], x[1]});
                                 return SumAll(b, b->Op("Mul", {y, y}), 2);
                               }),
              1e-6)
        << op;
  }
  for (const char* op : {"Mean", "Prod", "Sum"}) {
    EXPECT_LT(SecondOrderError({a},
                               [&](GraphBuilder* b, const std::vector<NodeOut>& x) {
                                 NodeOut r = b->Op(op, {x[0], b->Scalar(DT_INT32, 1)});
                                 return SumAll(b, b->Op("Mul", {r, r}), 1);
                               }),
              1e-6)
        << op;
  }
}

TEST(SecondOrderGradientTest, SoftmaxAndLosses) {
  std::mt19937 rng(3);
  Tensor logits = RandomTensor({2, 4}, &rng, -2, 2);
  Tensor w = RandomTensor({2, 4}, &rng);
  EXPECT_LT(SecondOrderError({logits},
                             [&](GraphBuilder* b, const std::vector<NodeOut>& x) {
                               return SumAll(b, b->Op("Mul", {b->Op("Softmax", {x[0]}), b->Const(w)}), 2);
                             }),
            1e-6);
  EXPECT_LT(SecondOrderError({logits},
                             [&](GraphBuilder* b, const std::vector<NodeOut>& x) {
                               return SumAll(b, b->Op("Mul", {b->Op("LogSoftmax", {x[0]}), b->Const(w)}), 2);
                             }),
            1e-6);
  Tensor labels = Tensor::FromValues<double>({0.1, 0.2, 0.3, 0.4, 1, 0, 0, 0}, TensorShape{2, 4}).value();
  EXPECT_LT(SecondOrderError({logits},
                             [&](GraphBuilder* b, const std::vector<NodeOut>& x) {
                               return SumAll(b, b->Op("SoftmaxCrossEntropyWithLogits", {x[0], b->Const(labels)}), 1);
                             }),
            1e-6);
  Tensor ids = Tensor::FromValues<int32_t>({3, 1}, TensorShape{2}).value();
  EXPECT_LT(SecondOrderError({logits},
                             [&](GraphBuilder* b, const std::vector<NodeOut>& x) {
                               return SumAll(b, b->Op("SparseSoftmaxCrossEntropyWithLogits", {x[0], b->Const(ids)}), 1);
                             }),
            1e-6);
  EXPECT_LT(SecondOrderError({logits},
                             [&](GraphBuilder* b, const std::vector<NodeOut>& x) { return b->Op("L2Loss", {x[0]}); }),
            1e-6);
}

TEST(SecondOrderGradientTest, ConvolutionAndPooling) {
  std::mt19937 rng(4);
  AttrMap conv = {{"strides", std::vector<int64_t>{1, 1, 1, 1}}, {"padding", "SAME"}};
  AttrMap pool = {{"ksize", std::vector<int64_t>{1, 2, 2, 1}},
                  {"strides", std::vector<int64_t>{1, 2, 2, 1}},
                  {"padding", "VALID"}};
  EXPECT_LT(SecondOrderError({RandomTensor({1, 4, 4, 2}, &rng), RandomTensor({3, 3, 2, 2}, &rng)},
                             [&](GraphBuilder* b, const std::vector<NodeOut>& x) {
                               NodeOut y = b->Op("AvgPool", {b->Op("Conv2D", {x[0], x[1]}, conv)}, pool);
                               return SumAll(b, b->Op("Mul", {y, y}), 4);
                             }),
            1e-6);
}

TEST(SecondOrderGradientTest, ArrayOps) {
  std::mt19937 rng(5);
  Tensor a = RandomTensor({3, 4}, &rng);
  auto i32 = [](std::vector<int32_t> v, TensorShape s) { return Tensor::FromValues<int32_t>(v, s).value(); };
  std::vector<std::pair<const char*, std::function<NodeOut(GraphBuilder*, NodeOut)>>> cases = {
      {"Transpose",
       [&](GraphBuilder* b, NodeOut x) {
         return b->Op("Transpose", {x, b->Const(i32({1, 0}, {2}))});
       }},
      {"Reshape",
       [&](GraphBuilder* b, NodeOut x) {
         return b->Op("Reshape", {x, b->Const(i32({2, 6}, {2}))});
       }},
      {"GatherV2",
       [&](GraphBuilder* b, NodeOut x) {
         return b->Op("GatherV2", {x, b->Const(i32({2, 0, 2}, {3})), b->Scalar(DT_INT32, 1)});
       }},
      {"Slice",
       [&](GraphBuilder* b, NodeOut x) {
         return b->Op("Slice", {x, b->Const(i32({1, 1}, {2})), b->Const(i32({2, 2}, {2}))});
       }},
      {"Tile",
       [&](GraphBuilder* b, NodeOut x) {
         return b->Op("Tile", {x, b->Const(i32({2, 1}, {2}))});
       }},
      {"Pad",
       [&](GraphBuilder* b, NodeOut x) {
         return b->Op("Pad", {x, b->Const(i32({1, 0, 0, 2}, {2, 2}))});
       }},
      {"ConcatV2",
       [&](GraphBuilder* b, NodeOut x) {
         return b->Op("ConcatV2", {x, x, b->Scalar(DT_INT32, 0)});
       }},
  };
  for (auto& [name, f] : cases) {
    EXPECT_LT(SecondOrderError({a},
                               [&](GraphBuilder* b, const std::vector<NodeOut>& x) {
                                 NodeOut y = f(b, b->Op("Tanh", {x[0]}));
                                 return SumAll(b, b->Op("Mul", {y, y}), 2);
                               }),
              1e-6)
        << name;
  }
}

}  // namespace
}  // namespace dflow
