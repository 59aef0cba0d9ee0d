// GatherV2, UnsortedSegmentSum, DynamicStitch: values against naive loops, static shapes, bad
// (out-of-range, negative, mismatched) inputs and gradients.
#include <string>
#include <vector>

#include "ops/array/array_test_util.h"

namespace dflow {
namespace {

using namespace testing;  // NOLINT

// params gathered at `indices` along `axis` by unravelling every output index.
std::vector<int64_t> NaiveGather(const Tensor& params, const std::vector<int64_t>& idx, const TensorShape& idx_shape,
                                 int axis, TensorShape* out_shape) {
  TensorShape out;
  for (int d = 0; d < axis; ++d) out.AddDimUnchecked(params.dim_size(d));
  for (int d = 0; d < idx_shape.dims(); ++d) out.AddDimUnchecked(idx_shape.dim_size(d));
  for (int d = axis + 1; d < params.dims(); ++d) out.AddDimUnchecked(params.dim_size(d));
  *out_shape = out;
  std::vector<int64_t> r;
  for (int64_t f = 0; f < out.num_elements(); ++f) {
    std::vector<int64_t> oi(out.dims());
    int64_t rem = f;
    for (int d = out.dims() - 1; d >= 0; --d) {
      oi[d] = rem % out.dim_size(d);
      rem /= out.dim_size(d);
    }
    int64_t ii = 0;  // flat index into indices
    for (int d = 0; d < idx_shape.dims(); ++d) ii = ii * idx_shape.dim_size(d) + oi[axis + d];
    int64_t src = 0;
    for (int d = 0; d < params.dims(); ++d) {
      int64_t c = d < axis ? oi[d] : d == axis ? idx[ii] : oi[d - 1 + idx_shape.dims()];
      src = src * params.dim_size(d) + c;
    }
    r.push_back(params.flat<int64_t>()[src]);
  }
  return r;
}

TEST(GatherV2Test, HandComputed) {
  Tensor p = Iota<float>(S({3, 2}));
  ExpectValues<float>(Eval("GatherV2", {p, I32({2, 0, 2}), Tensor(int32_t{0})}), {4, 5, 0, 1, 4, 5}, S({3, 2}));
  ExpectValues<float>(Eval("GatherV2", {p, I64({1}), Tensor(int64_t{1})}), {1, 3, 5}, S({3, 1}));
  ExpectValues<float>(Eval("GatherV2", {p, Tensor(int32_t{1}), Tensor(int32_t{-1})}), {1, 3, 5}, S({3}));
  ExpectValues<float>(Eval("GatherV2", {p, I32({}), Tensor(int32_t{0})}), {}, S({0, 2}));
  ExpectValues<std::string>(Eval("GatherV2", {MakeTensor<std::string>({"a", "b", "c"}, S({3})), I32({2, 2, 0}),
                                              Tensor(int32_t{0})}),
                            {"c", "c", "a"}, S({3}));
}

TEST(GatherV2Test, AgainstNaiveLoop) {
  Tensor p = Iota<int64_t>(S({3, 4, 2}));
  const std::vector<int64_t> idx = {3, 0, 1, 1, 2, 0};
  for (int axis = 0; axis < 3; ++axis) {
    std::vector<int64_t> in_range;
    for (int64_t i : idx) in_range.push_back(i % p.dim_size(axis));
    TensorShape idx_shape = S({2, 3}), out;
    std::vector<int64_t> want = NaiveGather(p, in_range, idx_shape, axis, &out);
    SCOPED_TRACE(axis);
    ExpectValues<int64_t>(Eval("GatherV2", {p, MakeTensor<int64_t>(in_range, idx_shape), Tensor(int32_t{axis})}), want,
                          out);
    std::vector<int32_t> i32(in_range.begin(), in_range.end());
    ExpectValues<int64_t>(Eval("GatherV2", {p, MakeTensor<int32_t>(i32, idx_shape), Tensor(int64_t{axis - 3})}), want,
                          out);
  }
}

TEST(GatherV2Test, BatchDims) {
  // params [2,3], indices [2,2], batch_dims 1: out[b, j] = params[b, indices[b, j]].
  Tensor p = Iota<int32_t>(S({2, 3}));
  ExpectValues<int32_t>(Eval("GatherV2", {p, MakeTensor<int32_t>({2, 0, 1, 1}, S({2, 2})), Tensor(int32_t{1})},
                             {{"batch_dims", int64_t{1}}}),
                        {2, 0, 4, 4}, S({2, 2}));
  ExpectKernelError("GatherV2", {p, MakeTensor<int32_t>({0, 0, 0}, S({3, 1})), Tensor(int32_t{1})},
                    {{"batch_dims", int64_t{1}}}, "params.shape[0]: 2 should be equal to indices.shape[0]: 3");
  ExpectKernelError("GatherV2", {p, MakeTensor<int32_t>({0, 0}, S({2, 1})), Tensor(int32_t{0})},
                    {{"batch_dims", int64_t{1}}}, "batch_dims (1) must be less than or equal to axis (0)");
}

TEST(GatherV2Test, OutOfRangeIndicesAreErrors) {
  Tensor p(DT_FLOAT, S({3, 2}));
  ExpectKernelError("GatherV2", {p, I32({0, 3}), Tensor(int32_t{0})}, {}, "indices[1] = 3 is not in [0, 3)");
  ExpectKernelError("GatherV2", {p, MakeTensor<int64_t>({0, 1, -1, 0}, S({2, 2})), Tensor(int32_t{0})}, {},
                    "indices[1,0] = -1 is not in [0, 3)");
  ExpectKernelError("GatherV2", {p, I32({2}), Tensor(int32_t{1})}, {}, "indices[0] = 2 is not in [0, 2)");
  ExpectKernelError("GatherV2", {p, I32({0}), Tensor(int32_t{2})}, {}, "axis 2 is out of range");
  ExpectKernelError("GatherV2", {Tensor(1.0f), I32({0}), Tensor(int32_t{0})}, {},
                    "params must be at least 1 dimensional");
  // Empty params with an index is out of range too.
  ExpectKernelError("GatherV2", {Tensor(DT_FLOAT, S({0, 2})), I32({0}), Tensor(int32_t{0})}, {}, "is not in [0, 0)");
  auto s = InferShapes("GatherV2", {Tensor(DT_FLOAT, S({3, 4, 5})), Tensor(DT_INT32, S({2, 7})), Tensor(int32_t{1})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({3, 2, 7, 5}));
}

TEST(UnsortedSegmentSumTest, ValuesAndNegativeIds) {
  Tensor data = MakeTensor<float>({1, 2, 3, 4, 5, 6, 7, 8}, S({4, 2}));
  ExpectValues<float>(Eval("UnsortedSegmentSum", {data, I32({0, 2, 0, -1}), Tensor(int32_t{3})}), {6, 8, 0, 0, 3, 4},
                      S({3, 2}));
  ExpectValues<int64_t>(Eval("UnsortedSegmentSum", {MakeTensor<int64_t>({1, 2, 3, 4}, S({2, 2})),
                                                    MakeTensor<int64_t>({1, 1, 0, 1}, S({2, 2})), Tensor(int64_t{2})}),
                        {3, 7}, S({2}));
  ExpectValues<double>(Eval("UnsortedSegmentSum", {Tensor(DT_DOUBLE, S({0, 3})), I32({}), Tensor(int32_t{2})}),
                       {0, 0, 0, 0, 0, 0}, S({2, 3}));
}

TEST(UnsortedSegmentSumTest, AgainstNaiveLoop) {
  Tensor data = Iota<int32_t>(S({6, 3}), 1);
  const std::vector<int32_t> ids = {3, 0, 3, -2, 1, 3};
  std::vector<int32_t> want(4 * 3, 0);
  for (int i = 0; i < 6; ++i)
    for (int k = 0; k < 3 && ids[i] >= 0; ++k) want[ids[i] * 3 + k] += data.flat<int32_t>()[i * 3 + k];
  ExpectValues<int32_t>(Eval("UnsortedSegmentSum", {data, I32(ids), Tensor(int32_t{4})}), want, S({4, 3}));
}

TEST(UnsortedSegmentSumTest, BadInputs) {
  Tensor data(DT_FLOAT, S({3, 2}));
  ExpectKernelError("UnsortedSegmentSum", {data, I32({0, 5, 1}), Tensor(int32_t{3})}, {},
                    "segment_ids[1] = 5 is out of range [0, 3)");
  ExpectKernelError("UnsortedSegmentSum", {data, I32({0, 1}), Tensor(int32_t{3})}, {}, "does not start with");
  ExpectKernelError("UnsortedSegmentSum", {data, I32({0, 1, 1}), Tensor(int32_t{-1})}, {}, "must be non-negative");
  ExpectKernelError("UnsortedSegmentSum", {data, I32({0, 1, 1}), I32({2})}, {}, "num_segments must be a scalar");
}

TEST(DynamicStitchTest, ValuesAndOverrides) {
  // TensorFlow's documented example.
  auto out = Eval("DynamicStitch",
                  {Tensor(int32_t{6}), I32({4, 1}), MakeTensor<int32_t>({5, 2, 0, 3}, S({2, 2})),
                   MakeTensor<float>({61, 62}, S({2})), MakeTensor<float>({41, 42, 11, 12}, S({2, 2})),
                   MakeTensor<float>({51, 52, 21, 22, 1, 2, 31, 32}, S({2, 2, 2}))},
                  {{"N", int64_t{3}}});
  ExpectValues<float>(out, {1, 2, 11, 12, 21, 22, 31, 32, 41, 42, 51, 52, 61, 62}, S({7, 2}));
  // Later entries win; unnamed rows are zero.
  out = Eval("DynamicStitch",
             {I32({0, 2}), I32({2}), MakeTensor<int64_t>({1, 2}, S({2})), MakeTensor<int64_t>({9}, S({1}))},
             {{"N", int64_t{2}}});
  ExpectValues<int64_t>(out, {1, 0, 9}, S({3}));
}

TEST(DynamicStitchTest, BadInputs) {
  AttrMap two = {{"N", int64_t{2}}};
  ExpectKernelError("DynamicStitch", {I32({0, -1}), I32({2}), I64({1, 2}), I64({3})}, two, "is negative");
  ExpectKernelError("DynamicStitch", {I32({0, 1}), I32({2}), I64({1, 2}), MakeTensor<int64_t>({3, 4}, S({1, 2}))}, two,
                    "must be indices[1].shape = [1] followed by the constant shape []");
  ExpectKernelError("DynamicStitch", {I32({0, 1}), I32({2}), I64({1}), I64({3})}, two, "data[0].shape = [1]");
}

// ---- gradients ----

TEST(GatherGradTest, GatherV2EveryAxis) {
  // Repeated indices: their gradients add up.
  EXPECT_GRAD_OK(OpGradientError("GatherV2", {Doubles(S({4, 3})), I32({3, 1, 3}), Tensor(int32_t{0})}, {0}), 1e-8);
  EXPECT_GRAD_OK(
      OpGradientError("GatherV2",
                      {Doubles(S({2, 4, 3})), MakeTensor<int64_t>({0, 3, 3, 2}, S({2, 2})), Tensor(int64_t{1})}, {0}),
      1e-8);
  EXPECT_GRAD_OK(OpGradientError("GatherV2", {Doubles(S({2, 3})), Tensor(int32_t{2}), Tensor(int32_t{-1})}, {0}), 1e-8);
  EXPECT_GRAD_OK(OpGradientError("GatherV2", {Floats(S({5})), I32({4, 0}), Tensor(int32_t{0})}, {0}), 1e-3);
  // An axis computed in the graph.
  auto err = MaxGradientError({Doubles(S({2, 4, 3}))}, [](GraphBuilder* b, const std::vector<NodeOut>& x) {
    NodeOut axis = b->Op("Identity", {b->Scalar(DT_INT32, -2)});
    return std::vector<NodeOut>{b->Op("GatherV2", {x[0], b->Const(I32({1, 1, 0})), axis})};
  });
  EXPECT_GRAD_OK(err, 1e-8);
}

TEST(GatherGradTest, GatherV2BatchDims) {
  auto bd = [](int64_t k) { return AttrMap{{"batch_dims", k}}; };
  // params [2, 3], indices [2, 2] (a repeated index), axis 1.
  EXPECT_GRAD_OK(OpGradientError("GatherV2",
                                 {Doubles(S({2, 3})), MakeTensor<int32_t>({2, 2, 0, 1}, S({2, 2})), Tensor(int32_t{1})},
                                 {0}, bd(1)),
                 1e-8);
  // Dimensions between the batch and the axis and after it; int64 indices.
  EXPECT_GRAD_OK(OpGradientError("GatherV2",
                                 {Doubles(S({2, 3, 4, 2})), MakeTensor<int64_t>({3, 0, 3, 1, 1, 2}, S({2, 3})),
                                  Tensor(int64_t{2})},
                                 {0}, bd(1)),
                 1e-8);
  // Two batch dimensions, indices with a dimension of their own after them.
  EXPECT_GRAD_OK(OpGradientError("GatherV2",
                                 {Doubles(S({2, 2, 5, 3})),
                                  MakeTensor<int32_t>({4, 4, 0, 1, 2, 3, 3, 3, 0, 0, 1, 4, 2, 2, 2, 1}, S({2, 2, 4})),
                                  Tensor(int32_t{2})},
                                 {0}, bd(2)),
                 1e-8);
  // A negative batch_dims counts from the end of the indices' dimensions; a negative axis too.
  EXPECT_GRAD_OK(OpGradientError("GatherV2",
                                 {Doubles(S({2, 4})), MakeTensor<int32_t>({3, 3, 1, 0, 2, 2}, S({2, 3})),
                                  Tensor(int32_t{-1})},
                                 {0}, bd(-1)),
                 1e-8);
  // An axis computed in the graph.
  auto err = MaxGradientError({Doubles(S({3, 2, 4}))}, [](GraphBuilder* b, const std::vector<NodeOut>& x) {
    NodeOut axis = b->Op("Identity", {b->Scalar(DT_INT32, 2)});
    return std::vector<NodeOut>{b->Op("GatherV2",
                                      {x[0], b->Const(MakeTensor<int32_t>({0, 3, 3, 1, 2, 2}, S({3, 2}))), axis},
                                      {{"batch_dims", int64_t{1}}})};
  });
  EXPECT_GRAD_OK(err, 1e-8);
  // Float.
  EXPECT_GRAD_OK(OpGradientError("GatherV2",
                                 {Floats(S({2, 3})), MakeTensor<int32_t>({1, 1, 2, 0}, S({2, 2})), Tensor(int32_t{1})},
                                 {0}, bd(1)),
                 1e-3);
}

TEST(GatherGradTest, UnsortedSegmentSumAndDynamicStitch) {
  EXPECT_GRAD_OK(OpGradientError("UnsortedSegmentSum", {Doubles(S({4, 2})), I32({2, 0, -1, 2}), Tensor(int32_t{3})},
                                 {0}),
                 1e-8);
  EXPECT_GRAD_OK(
      OpGradientError("UnsortedSegmentSum",
                      {Doubles(S({2, 2, 3})), MakeTensor<int64_t>({1, 0, 1, 1}, S({2, 2})), Tensor(int64_t{2})}, {0}),
      1e-8);
  EXPECT_GRAD_OK(OpGradientError("DynamicStitch",
                                 {I32({0, 3}), I32({1, 2}), Doubles(S({2, 2})), Doubles(S({2, 2}), 0.4)}, {2, 3},
                                 {{"N", int64_t{2}}}),
                 1e-8);
  EXPECT_GRAD_OK(OpGradientError("UnsortedSegmentSum", {Floats(S({3})), I32({1, 1, 0}), Tensor(int32_t{2})}, {0}),
                 1e-3);
}

}  // namespace
}  // namespace dflow
