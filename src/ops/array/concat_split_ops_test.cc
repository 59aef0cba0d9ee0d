// ConcatV2, ConcatOffset, Split, SplitV: values against naive loops, static shapes, bad inputs
// and gradients.
#include <string>
#include <vector>

#include "ops/array/array_test_util.h"

namespace dflow {
namespace {

using namespace testing;  // NOLINT

// Naive concatenation by multi-index: out[..., k, ...] comes from the input whose range along
// `axis` holds k.
template <typename T>
std::vector<T> NaiveConcat(const std::vector<Tensor>& xs, int axis, TensorShape* out_shape) {
  TensorShape s;
  int64_t total = 0;
  for (const Tensor& x : xs) total += x.dim_size(axis);
  for (int d = 0; d < xs[0].dims(); ++d) s.AddDimUnchecked(d == axis ? total : xs[0].dim_size(d));
  *out_shape = s;
  std::vector<T> out;
  std::vector<int64_t> idx(s.dims(), 0);
  for (int64_t flat = 0; flat < s.num_elements(); ++flat) {
    int64_t rem = flat;
    for (int d = s.dims() - 1; d >= 0; --d) {
      idx[d] = rem % s.dim_size(d);
      rem /= s.dim_size(d);
    }
    int64_t k = idx[axis];
    size_t which = 0;
    while (k >= xs[which].dim_size(axis)) k -= xs[which++].dim_size(axis);
    const Tensor& x = xs[which];
    int64_t src = 0;
    for (int d = 0; d < s.dims(); ++d) src = src * x.dim_size(d) + (d == axis ? k : idx[d]);
    out.push_back(x.flat<T>()[src]);
  }
  return out;
}

TEST(ConcatV2Test, HandComputed) {
  Tensor a = MakeTensor<float>({1, 2, 3, 4}, S({2, 2}));
  Tensor b = MakeTensor<float>({5, 6}, S({1, 2}));
  ExpectValues<float>(Eval("ConcatV2", {a, b, Tensor(int32_t{0})}), {1, 2, 3, 4, 5, 6}, S({3, 2}));
  Tensor c = MakeTensor<float>({7, 8}, S({2, 1}));
  ExpectValues<float>(Eval("ConcatV2", {a, c, Tensor(int64_t{1})}), {1, 2, 7, 3, 4, 8}, S({2, 3}));
  ExpectValues<float>(Eval("ConcatV2", {a, c, Tensor(int32_t{-1})}), {1, 2, 7, 3, 4, 8}, S({2, 3}));
  // Strings, bools and empty inputs.
  ExpectValues<std::string>(Eval("ConcatV2", {MakeTensor<std::string>({"a"}, S({1})),
                                              MakeTensor<std::string>({"b", "c"}, S({2})), Tensor(int32_t{0})}),
                            {"a", "b", "c"}, S({3}));
  ExpectValues<bool>(Eval("ConcatV2",
                          {MakeTensor<bool>({true}, S({1})), MakeTensor<bool>({false}, S({1})), Tensor(int32_t{0})}),
                     {true, false}, S({2}));
  ExpectValues<int32_t>(Eval("ConcatV2", {Tensor(DT_INT32, S({0, 3})), Iota<int32_t>(S({1, 3})), Tensor(int32_t{0})}),
                        {0, 1, 2}, S({1, 3}));
}

TEST(ConcatV2Test, AgainstNaiveLoop) {
  for (int axis = 0; axis < 3; ++axis) {
    std::vector<Tensor> xs;
    for (int i = 0; i < 3; ++i) {
      TensorShape s = S({2, 3, 4});
      DimVector d(s.dim_sizes().begin(), s.dim_sizes().end());
      d[axis] = i + 1;
      xs.push_back(Iota<int64_t>(*TensorShape::FromDims(d), 100 * i));
    }
    TensorShape want_shape;
    std::vector<int64_t> want = NaiveConcat<int64_t>(xs, axis, &want_shape);
    std::vector<Tensor> in = xs;
    in.push_back(Tensor(int32_t{axis}));
    SCOPED_TRACE(axis);
    ExpectValues<int64_t>(Eval("ConcatV2", in), want, want_shape);
    for (DType dt : {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8}) {
      std::vector<Tensor> typed;
      for (const Tensor& x : xs) {
        Tensor t(dt, x.shape());
        VisitNumeric(dt, [&]<typename T>() {
          for (int64_t k = 0; k < x.NumElements(); ++k) t.data<T>()[k] = static_cast<T>(x.flat<int64_t>()[k] % 200);
        });
        typed.push_back(t);
      }
      typed.push_back(Tensor(int32_t{axis}));
      Tensor got = Eval("ConcatV2", typed);
      ASSERT_EQ(got.shape(), want_shape);
      VisitNumeric(dt, [&]<typename T>() {
        for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(got.flat<T>()[k], static_cast<T>(want[k] % 200));
      });
    }
  }
}

TEST(ConcatV2Test, StaticShapes) {
  auto s = InferShapes("ConcatV2", {Tensor(DT_FLOAT, S({2, 3})), Tensor(DT_FLOAT, S({5, 3})), Tensor(int32_t{0})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({7, 3}));
  ExpectInvalid(InferShapes("ConcatV2", {Tensor(DT_FLOAT, S({2, 3})), Tensor(DT_FLOAT, S({2, 4})), Tensor(int32_t{0})}),
                "dimension 1 of the inputs must match");
  ExpectInvalid(InferShapes("ConcatV2", {Tensor(DT_FLOAT, S({2})), Tensor(DT_FLOAT, S({2, 4})), Tensor(int32_t{0})}),
                "same rank");
  ExpectInvalid(InferShapes("ConcatV2", {Tensor(1.0f), Tensor(2.0f), Tensor(int32_t{0})}), "Can't concatenate scalars");
  ExpectInvalid(InferShapes("ConcatV2", {Tensor(DT_FLOAT, S({2})), Tensor(DT_FLOAT, S({2})), Tensor(int32_t{1})}),
                "out of range");
  // An axis that is not a constant leaves the sizes unknown but keeps the rank.
  Graph g;
  RegisterAllOps();
  auto ph = [&](const char* name, DType t, PartialTensorShape s) {
    NodeSpec p;
    p.name = name;
    p.op = "Placeholder";
    p.attrs["dtype"] = t;
    p.attrs["shape"] = s;
    return *g.AddNode(p);
  };
  NodeSpec n;
  n.name = "c";
  n.op = "ConcatV2";
  n.inputs = {{ph("a", DT_FLOAT, {2, 3}), 0}, {ph("b", DT_FLOAT, {2, 3}), 0}, {ph("axis", DT_INT32, {}), 0}};
  auto node = g.AddNode(n);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ((*node)->output_shape(0), PartialTensorShape({-1, -1}));
}

TEST(ConcatV2Test, KernelErrors) {
  Tensor a(DT_FLOAT, S({2, 3}));
  ExpectKernelError("ConcatV2", {a, Tensor(DT_FLOAT, S({2, 4})), Tensor(int32_t{0})}, {},
                    "dimensions of inputs should match");
  ExpectKernelError("ConcatV2", {a, Tensor(DT_FLOAT, S({6})), Tensor(int32_t{0})}, {}, "ranks of all input tensors");
  ExpectKernelError("ConcatV2", {a, a, Tensor(int32_t{2})}, {}, "axis 2 is out of range");
  ExpectKernelError("ConcatV2", {a, a, Tensor(int32_t{-3})}, {}, "out of range");
  ExpectKernelError("ConcatV2", {Tensor(1.0f), Tensor(2.0f), Tensor(int32_t{0})}, {}, "scalars");
  ExpectKernelError("ConcatV2", {a, a, I32({0})}, {}, "axis must be a scalar");
}

TEST(ConcatOffsetTest, Values) {
  auto out = EvalAll("ConcatOffset", {Tensor(int32_t{1}), I32({2, 3, 5}), I32({2, 7, 5}), I32({2, 1, 5})});
  ASSERT_EQ(out.size(), 3u);
  ExpectValues<int32_t>(out[0], {0, 0, 0}, S({3}));
  ExpectValues<int32_t>(out[1], {0, 3, 0}, S({3}));
  ExpectValues<int32_t>(out[2], {0, 10, 0}, S({3}));
  ExpectKernelError("ConcatOffset", {Tensor(int32_t{1}), I32({2, 3}), I32({3, 3})}, {}, "mismatch");
  ExpectKernelError("ConcatOffset", {Tensor(int32_t{1}), I32({2, 3}), I32({3})}, {}, "has 1 dimensions");
  ExpectKernelError("ConcatOffset", {Tensor(int32_t{4}), I32({2, 3}), I32({2, 3})}, {}, "out of range");
}

// ---- Split, SplitV ----

TEST(SplitTest, HandComputed) {
  Tensor x = Iota<float>(S({2, 6}));
  auto out = EvalAll("Split", {Tensor(int32_t{1}), x}, {{"num_split", int64_t{3}}});
  ASSERT_EQ(out.size(), 3u);
  ExpectValues<float>(out[0], {0, 1, 6, 7}, S({2, 2}));
  ExpectValues<float>(out[1], {2, 3, 8, 9}, S({2, 2}));
  ExpectValues<float>(out[2], {4, 5, 10, 11}, S({2, 2}));
  // Along the first dimension the pieces share the input's buffer.
  out = EvalAll("Split", {Tensor(int32_t{0}), x}, {{"num_split", int64_t{2}}});
  ASSERT_EQ(out.size(), 2u);
  ExpectValues<float>(out[1], {6, 7, 8, 9, 10, 11}, S({1, 6}));
  EXPECT_TRUE(out[1].SharesBufferWith(x));
  out = EvalAll("Split", {Tensor(int32_t{-1}), MakeTensor<std::string>({"a", "b"}, S({2}))},
                {{"num_split", int64_t{2}}});
  ASSERT_EQ(out.size(), 2u);
  ExpectValues<std::string>(out[1], {"b"}, S({1}));
}

TEST(SplitTest, ConcatOfPiecesIsTheInput) {
  // Property: splitting then concatenating along every axis gives back the input.
  Tensor x = Iota<int32_t>(S({4, 2, 6}));
  for (int axis = 0; axis < 3; ++axis) {
    auto pieces = EvalAll("Split", {Tensor(int32_t{axis}), x}, {{"num_split", int64_t{2}}});
    ASSERT_EQ(pieces.size(), 2u);
    pieces.push_back(Tensor(int32_t{axis}));
    ExpectValues<int32_t>(Eval("ConcatV2", pieces), Values<int32_t>(x), x.shape());
  }
}

TEST(SplitTest, Errors) {
  ExpectInvalid(RunOpKernel("Split", {Tensor(int32_t{1}), Tensor(DT_FLOAT, S({2, 5}))}, {{"num_split", int64_t{2}}}),
                "evenly divide");
  ExpectKernelError("Split", {Tensor(int32_t{1}), Tensor(DT_FLOAT, S({2, 5}))}, {{"num_split", int64_t{2}}},
                    "evenly divide");
  ExpectKernelError("Split", {Tensor(int32_t{2}), Tensor(DT_FLOAT, S({2, 4}))}, {{"num_split", int64_t{2}}},
                    "out of range");
  ExpectKernelError("Split", {Tensor(int32_t{0}), Tensor(1.0f)}, {{"num_split", int64_t{1}}}, "can't split a scalar");
  ExpectInvalid(RunOpKernel("Split", {Tensor(int32_t{0}), Tensor(DT_FLOAT, S({2}))}, {{"num_split", int64_t{0}}}),
                "minimum");
}

TEST(SplitVTest, HandComputedWithInferredSize) {
  Tensor x = Iota<double>(S({2, 5}));
  auto out = EvalAll("SplitV", {x, I64({1, -1, 2}), Tensor(int32_t{1})}, {{"num_split", int64_t{3}}});
  ASSERT_EQ(out.size(), 3u);
  ExpectValues<double>(out[0], {0, 5}, S({2, 1}));
  ExpectValues<double>(out[1], {1, 2, 6, 7}, S({2, 2}));
  ExpectValues<double>(out[2], {3, 4, 8, 9}, S({2, 2}));
  out = EvalAll("SplitV", {x, I32({0, 2}), Tensor(int32_t{0})}, {{"num_split", int64_t{2}}});
  ASSERT_EQ(out.size(), 2u);
  ExpectValues<double>(out[0], {}, S({0, 5}));
  ExpectValues<double>(out[1], Values<double>(x), S({2, 5}));
  auto shapes = InferShapes("SplitV", {x, I64({1, -1, 2}), Tensor(int32_t{1})}, {{"num_split", int64_t{3}}});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[1], PartialTensorShape({2, 2}));
}

TEST(SplitVTest, Errors) {
  Tensor x(DT_FLOAT, S({2, 5}));
  AttrMap two = {{"num_split", int64_t{2}}};
  ExpectKernelError("SplitV", {x, I64({1, 2}), Tensor(int32_t{1})}, two, "Determined shape must either match");
  ExpectKernelError("SplitV", {x, I64({-1, -1}), Tensor(int32_t{1})}, two, "at most one -1");
  ExpectKernelError("SplitV", {x, I64({7, -1}), Tensor(int32_t{1})}, two, "Determined shape");
  ExpectKernelError("SplitV", {x, I64({-2, 7}), Tensor(int32_t{1})}, two, "must be >= 0");
  ExpectKernelError("SplitV", {x, I64({1, 2, 2}), Tensor(int32_t{1})}, two, "3 entries but num_split is 2");
  ExpectKernelError("SplitV", {x, I64({1, 1}), Tensor(int32_t{-3})}, two, "out of range");
  ExpectInvalid(InferShapes("SplitV", {x, I64({1, 2}), Tensor(int32_t{1})}, two), "Determined shape");
}

// ---- gradients ----

TEST(ConcatSplitGradTest, ConcatV2StaticAndDynamic) {
  std::vector<Tensor> in = {Doubles(S({2, 3})), Doubles(S({2, 1}), 0.5), Doubles(S({2, 2}), 0.2), Tensor(int32_t{1})};
  EXPECT_GRAD_OK(OpGradientError("ConcatV2", in, {0, 1, 2}), 1e-8);
  in.back() = Tensor(int64_t{-2});
  EXPECT_GRAD_OK(OpGradientError("ConcatV2", {Doubles(S({1, 3})), Doubles(S({2, 3})), Tensor(int64_t{-2})}, {0, 1}),
                 1e-8);
  // Inputs of unknown static shape take the ConcatOffset + Slice path.
  auto err = MaxGradientError({Doubles(S({2, 3})), Doubles(S({4, 3}))}, [](GraphBuilder* b,
                                                                           const std::vector<NodeOut>& x) {
    std::vector<NodeOut> hidden;
    for (const NodeOut& v : x)
      hidden.push_back(b->Op("PlaceholderWithDefault", {v}, {{"shape", PartialTensorShape()}}));
    hidden.push_back(b->Scalar(DT_INT32, 0));
    return std::vector<NodeOut>{b->Op("ConcatV2", hidden)};
  });
  EXPECT_GRAD_OK(err, 1e-8);
  EXPECT_GRAD_OK(OpGradientError("ConcatV2", {Floats(S({3})), Floats(S({2})), Tensor(int32_t{0})}, {0, 1}), 1e-3);
}

TEST(ConcatSplitGradTest, SplitAndSplitV) {
  EXPECT_GRAD_OK(OpGradientError("Split", {Tensor(int32_t{1}), Doubles(S({2, 4}))}, {1}, {{"num_split", int64_t{2}}}),
                 1e-8);
  EXPECT_GRAD_OK(OpGradientError("SplitV", {Doubles(S({5, 2})), I64({2, -1, 1}), Tensor(int32_t{0})}, {0},
                                 {{"num_split", int64_t{3}}}),
                 1e-8);
  // Only one piece used: the others get zeros.
  EXPECT_GRAD_OK(OpGradientError("Split", {Tensor(int32_t{0}), Doubles(S({3, 2}))}, {1}, {{"num_split", int64_t{3}}},
                                 1),
                 1e-8);
  EXPECT_GRAD_OK(OpGradientError("Split", {Tensor(int32_t{0}), Floats(S({4}))}, {1}, {{"num_split", int64_t{2}}}),
                 1e-3);
}

}  // namespace
}  // namespace dflow
