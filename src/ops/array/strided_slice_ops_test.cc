// StridedSlice and StridedSliceGrad: every mask, negative strides, new-axis and shrink
// combinations against a naive reference written here from Python's indexing rules, bad specs,
// and gradients.
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ops/array/array_test_util.h"

namespace dflow {
namespace {

using namespace testing;  // NOLINT

enum class Kind { kSlice, kIndex, kNewAxis, kEllipsis };

struct Entry {
  Kind kind = Kind::kSlice;
  int64_t begin = 0, end = 0, stride = 1;
  bool open_begin = false, open_end = false;  // begin_mask / end_mask bits
};

// One input dimension after indexing: the first element, the step and the count, or a fixed
// index (removed dimension).
struct DimPick {
  int64_t start = 0, step = 1, count = 0;
  bool removed = false;
};

// Python's slice.indices(n) for slice(begin or None, end or None, stride).
DimPick PythonSlice(const Entry& e, int64_t n) {
  DimPick p;
  p.step = e.stride;
  auto norm = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v += n;
    return std::min(std::max(v, lo), hi);
  };
  int64_t start, stop;
  if (e.stride > 0) {
    start = e.open_begin ? 0 : norm(e.begin, 0, n);
    stop = e.open_end ? n : norm(e.end, 0, n);
    p.count = stop > start ? (stop - start + e.stride - 1) / e.stride : 0;
  } else {
    start = e.open_begin ? n - 1 : norm(e.begin, -1, n - 1);
    stop = e.open_end ? -1 : norm(e.end, -1, n - 1);
    p.count = start > stop ? (start - stop + (-e.stride) - 1) / (-e.stride) : 0;
  }
  p.start = start;
  return p;
}

// x[entries] for a tensor of `shape` holding `values`, or nullopt where Python (and TensorFlow)
// rejects the spec: an index out of range, a stride of 0, an index with a stride other than
// positive, more indices than dimensions.
std::optional<std::pair<TensorShape, std::vector<int64_t>>> NaiveStridedSlice(const TensorShape& shape,
                                                                              const std::vector<int64_t>& values,
                                                                              const std::vector<Entry>& entries) {
  int real = 0;
  bool has_ellipsis = false;
  for (const Entry& e : entries) {
    if (e.kind == Kind::kSlice || e.kind == Kind::kIndex) ++real;
    if (e.kind == Kind::kEllipsis) has_ellipsis = true;
    if (e.stride == 0) return std::nullopt;
  }
  if (real > shape.dims()) return std::nullopt;
  std::vector<Entry> full = entries;
  if (!has_ellipsis) full.push_back(Entry{Kind::kEllipsis});
  std::vector<DimPick> picks;  // one per input dimension
  std::vector<int> out_dims;   // per output dim: the input dim it walks, or -1 for a new axis
  int dim = 0;
  for (const Entry& e : full) {
    if (e.kind == Kind::kEllipsis) {
      for (int k = 0; k < shape.dims() - real; ++k, ++dim) {
        picks.push_back({0, 1, shape.dim_size(dim), false});
        out_dims.push_back(dim);
      }
    } else if (e.kind == Kind::kNewAxis) {
      out_dims.push_back(-1);
    } else if (e.kind == Kind::kIndex) {
      const int64_t n = shape.dim_size(dim);
      const int64_t i = e.begin < 0 ? e.begin + n : e.begin;
      if (i < 0 || i >= n || e.stride <= 0) return std::nullopt;
      picks.push_back({i, 1, 1, true});
      ++dim;
    } else {
      picks.push_back(PythonSlice(e, shape.dim_size(dim)));
      out_dims.push_back(dim);
      ++dim;
    }
  }
  TensorShape out;
  for (int d : out_dims) out.AddDimUnchecked(d < 0 ? 1 : picks[d].count);
  std::vector<int64_t> result;
  // Walk every combination of the picked positions (row-major over the input dimensions; new
  // axes and removed dimensions do not change the order).
  int64_t total = 1;
  for (const DimPick& p : picks) total *= p.count;
  std::vector<int64_t> k(picks.size(), 0);
  for (int64_t f = 0; f < total; ++f) {
    int64_t rem = f;
    for (int d = static_cast<int>(picks.size()) - 1; d >= 0; --d) {
      k[d] = rem % picks[d].count;
      rem /= picks[d].count;
    }
    int64_t src = 0;
    for (size_t d = 0; d < picks.size(); ++d) src = src * shape.dim_size(d) + picks[d].start + k[d] * picks[d].step;
    result.push_back(values[src]);
  }
  return std::make_pair(out, result);
}

struct Spec {
  Tensor begin, end, strides;
  AttrMap masks;
};

Spec ToSpec(const std::vector<Entry>& entries, DType index_type = DT_INT32) {
  std::vector<int64_t> b, e, s;
  int64_t bm = 0, em = 0, el = 0, na = 0, sh = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& x = entries[i];
    b.push_back(x.begin);
    e.push_back(x.end);
    s.push_back(x.stride);
    if (x.open_begin) bm |= int64_t{1} << i;
    if (x.open_end) em |= int64_t{1} << i;
    if (x.kind == Kind::kEllipsis) el |= int64_t{1} << i;
    if (x.kind == Kind::kNewAxis) na |= int64_t{1} << i;
    if (x.kind == Kind::kIndex) sh |= int64_t{1} << i;
  }
  auto vec = [&](const std::vector<int64_t>& v) {
    if (index_type == DT_INT64) return I64(v);
    return I32(std::vector<int32_t>(v.begin(), v.end()));
  };
  return {
      vec(b),
      vec(e),
      vec(s),
      {{"begin_mask", bm}, {"end_mask", em}, {"ellipsis_mask", el}, {"new_axis_mask", na}, {"shrink_axis_mask", sh}}};
}

StatusOr<std::vector<Tensor>> RunSlice(const Tensor& x, const std::vector<Entry>& entries,
                                       DType index_type = DT_INT32) {
  Spec s = ToSpec(entries, index_type);
  return RunOpKernel("StridedSlice", {x, s.begin, s.end, s.strides}, s.masks);
}

Entry Sl(int64_t b, int64_t e, int64_t s = 1, bool ob = false, bool oe = false) {
  return Entry{Kind::kSlice, b, e, s, ob, oe};
}
Entry Idx(int64_t i) { return Entry{Kind::kIndex, i, i + 1, 1}; }
Entry NewAxis() { return Entry{Kind::kNewAxis}; }
Entry Ellipsis() { return Entry{Kind::kEllipsis}; }

void ExpectSlice(const Tensor& x, const std::vector<Entry>& entries, const std::vector<int64_t>& want,
                 const TensorShape& shape) {
  auto r = RunSlice(x, entries);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectValues<int64_t>((*r)[0], want, shape);
}

TEST(StridedSliceTest, HandComputed) {
  Tensor v = Iota<int64_t>(S({6}));
  ExpectSlice(v, {Sl(1, 5, 2)}, {1, 3}, S({2}));                           // v[1:5:2]
  ExpectSlice(v, {Sl(0, 0, -1, true, true)}, {5, 4, 3, 2, 1, 0}, S({6}));  // v[::-1]
  ExpectSlice(v, {Sl(-2, 0, -2, false, true)}, {4, 2, 0}, S({3}));         // v[-2::-2]
  ExpectSlice(v, {Sl(4, 1, -1)}, {4, 3, 2}, S({3}));                       // v[4:1:-1]
  ExpectSlice(v, {Sl(-100, 100)}, {0, 1, 2, 3, 4, 5}, S({6}));             // clamped
  ExpectSlice(v, {Sl(3, 1)}, {}, S({0}));                                  // empty
  ExpectSlice(v, {Idx(-1)}, {5}, S({}));                                   // v[-1]
  Tensor m = Iota<int64_t>(S({3, 4}));
  ExpectSlice(m, {Ellipsis(), Idx(0)}, {0, 4, 8}, S({3}));                              // m[..., 0]
  ExpectSlice(m, {Sl(0, 0, 1, true, true), NewAxis(), Idx(2)}, {2, 6, 10}, S({3, 1}));  // m[:, newaxis, 2]
  ExpectSlice(m, {NewAxis(), Ellipsis(), NewAxis()}, Values<int64_t>(m), S({1, 3, 4, 1}));
  ExpectSlice(m, {Idx(1), Sl(3, 0, -2)}, {7, 5}, S({2}));  // m[1, 3:0:-2]
  ExpectSlice(m, {Sl(0, 0, -1, true, true), Sl(0, 0, -1, true, true)}, {11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0},
              S({3, 4}));
}

TEST(StridedSliceTest, IdentitySlicesShareTheBuffer) {
  Tensor m = Iota<int64_t>(S({3, 4}));
  auto r = RunSlice(m, {NewAxis(), Ellipsis()});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].shape(), S({1, 3, 4}));
  EXPECT_TRUE((*r)[0].SharesBufferWith(m));
  r = RunSlice(m, {Sl(0, 3), Sl(0, 4)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE((*r)[0].SharesBufferWith(m));
}

// Thousands of random specs over a [4,3,5] tensor, every kind of entry and mask, against the
// naive reference — and over int64 indices and the kernel alone for a subset.
TEST(StridedSliceTest, RandomSpecsAgainstNaiveReference) {
  const TensorShape shape = S({4, 3, 5});
  Tensor x = Iota<int64_t>(shape);
  std::vector<int64_t> values = Values<int64_t>(x);
  std::mt19937 rng(1234);
  auto pick = [&](std::initializer_list<int64_t> v) { return *(v.begin() + rng() % v.size()); };
  int ok_cases = 0, error_cases = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 5);
    std::vector<Entry> entries;
    bool ellipsis = false;
    for (int i = 0; i < n; ++i) {
      Entry e;
      const int k = static_cast<int>(rng() % 10);
      if (k < 5) {
        e.kind = Kind::kSlice;
      } else if (k < 7) {
        e.kind = Kind::kIndex;
      } else if (k < 9) {
        e.kind = Kind::kNewAxis;
      } else {
        e.kind = ellipsis ? Kind::kSlice : Kind::kEllipsis;
        ellipsis = true;
      }
      e.begin = pick({-7, -5, -2, -1, 0, 1, 2, 3, 4, 6});
      e.end = pick({-7, -3, -1, 0, 1, 2, 4, 5, 9});
      e.stride = e.kind == Kind::kIndex ? 1 : pick({-3, -2, -1, 1, 1, 2, 3});
      e.open_begin = rng() % 4 == 0;
      e.open_end = rng() % 4 == 0;
      if (e.kind == Kind::kIndex) e.open_begin = e.open_end = false;  // checked separately below
      entries.push_back(e);
    }
    auto want = NaiveStridedSlice(shape, values, entries);
    auto got = RunSlice(x, entries, trial % 2 ? DT_INT64 : DT_INT32);
    SCOPED_TRACE(absl::StrCat("trial ", trial, ": begin ", ToSpec(entries).begin.ToString(), " end ",
                              ToSpec(entries).end.ToString(), " strides ", ToSpec(entries).strides.ToString()));
    if (!want) {
      ++error_cases;
      EXPECT_FALSE(got.ok());
      if (!got.ok()) EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << got.status();
      continue;
    }
    ++ok_cases;
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectValues<int64_t>((*got)[0], want->second, want->first);
    if (trial % 10 == 0) {
      Spec s = ToSpec(entries);
      auto k = RunKernelOnly("StridedSlice", {x, s.begin, s.end, s.strides}, s.masks);
      ASSERT_TRUE(k.ok()) << k.status();
      ExpectValues<int64_t>((*k)[0], want->second, want->first);
    }
  }
  // The generator covers both outcomes well.
  EXPECT_GT(ok_cases, 1500);
  EXPECT_GT(error_cases, 100);
}

TEST(StridedSliceTest, ShrinkIgnoresMasksAndUsesBegin) {
  Tensor m = Iota<int64_t>(S({3, 4}));
  Entry e = Idx(2);
  e.open_begin = e.open_end = true;
  ExpectSlice(m, {e}, {8, 9, 10, 11}, S({4}));
}

TEST(StridedSliceTest, OtherTypes) {
  Tensor s = MakeTensor<std::string>({"a", "b", "c", "d"}, S({2, 2}));
  auto r = RunSlice(s, {Sl(0, 0, -1, true, true), Idx(1)});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectValues<std::string>((*r)[0], {"d", "b"}, S({2}));
  r = RunSlice(Iota<float>(S({5})), {Sl(1, 4, 2)});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectValues<float>((*r)[0], {1, 3}, S({2}));
  r = RunSlice(MakeTensor<bool>({true, false, true}, S({3})), {Sl(0, 0, -2, true, true)});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectValues<bool>((*r)[0], {true, true}, S({2}));
}

TEST(StridedSliceTest, BadSpecs) {
  Tensor m(DT_FLOAT, S({3, 4}));
  auto run = [&](const std::vector<Entry>& e) {
    Spec s = ToSpec(e);
    return RunKernelOnly("StridedSlice", {m, s.begin, s.end, s.strides}, s.masks);
  };
  ExpectInvalid(run({Sl(0, 1, 0)}), "strides[0] must be non-zero");
  ExpectInvalid(run({Idx(3)}), "slice index 3 of dimension 0 out of bounds");
  ExpectInvalid(run({Idx(-4)}), "slice index -4 of dimension 0 out of bounds");
  ExpectInvalid(run({Ellipsis(), Ellipsis()}), "Multiple ellipses");
  ExpectInvalid(run({Sl(0, 1), Sl(0, 1), Sl(0, 1)}), "Index out of range using input dim 2");
  Entry back = Idx(1);
  back.stride = -1;
  ExpectInvalid(run({back}), "only stride 1 allowed on non-range indexing");
  ExpectInvalid(RunKernelOnly("StridedSlice", {m, I32({0, 0}), I32({1}), I32({1, 1})}), "1D equal size");
  ExpectInvalid(RunKernelOnly("StridedSlice", {m, MakeTensor<int32_t>({0}, S({1, 1})), I32({1}), I32({1})}),
                "begin must be a 1-D vector");
  auto k = run({Sl(0, 1, 0)});
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("StridedSlice 'node'"), absl::string_view::npos) << k.status();
  EXPECT_NE(k.status().message().find("[3,4]"), absl::string_view::npos) << k.status();
  // The shape function rejects the same specs when they are constants.
  Spec s = ToSpec({Idx(5)});
  ExpectInvalid(InferShapes("StridedSlice", {m, s.begin, s.end, s.strides}, s.masks), "out of bounds");
}

TEST(StridedSliceGradTest, ScattersIntoZeros) {
  // The gradient of v[4:0:-2] over a [6] vector.
  Spec s = ToSpec({Sl(4, 0, -2)});
  Tensor dy = MakeTensor<double>({10, 20}, S({2}));
  ExpectValues<double>(Eval("StridedSliceGrad", {I32({6}), s.begin, s.end, s.strides, dy}, s.masks),
                       {0, 0, 20, 0, 10, 0}, S({6}));
  s = ToSpec({Ellipsis(), Idx(1), NewAxis()});
  dy = MakeTensor<double>({1, 2}, S({2, 1}));
  ExpectValues<double>(Eval("StridedSliceGrad", {I32({2, 3}), s.begin, s.end, s.strides, dy}, s.masks),
                       {0, 1, 0, 0, 2, 0}, S({2, 3}));
  ExpectKernelError("StridedSliceGrad", {I32({2, 3}), s.begin, s.end, s.strides, MakeTensor<double>({1, 2}, S({2}))},
                    s.masks, "shape of dy was [2] instead of [2,1]");
  ExpectKernelError("StridedSliceGrad", {I32({2, -3}), s.begin, s.end, s.strides, dy}, s.masks, "");
}

TEST(StridedSliceGradTest, NumericalGradients) {
  const std::vector<std::vector<Entry>> specs = {
      {Sl(1, 3), Sl(0, 0, -1, true, true)},
      {Ellipsis(), Idx(-1)},
      {Sl(3, 0, -2), NewAxis(), Sl(1, 4, 2)},
      {Idx(1), NewAxis(), Ellipsis()},
  };
  for (const auto& spec : specs) {
    Spec s = ToSpec(spec);
    EXPECT_GRAD_OK(OpGradientError("StridedSlice", {Doubles(S({4, 5})), s.begin, s.end, s.strides}, {0}, s.masks),
                   1e-8);
  }
  Spec s = ToSpec({Sl(0, 0, -1, true, true)});
  EXPECT_GRAD_OK(OpGradientError("StridedSlice", {Floats(S({5})), s.begin, s.end, s.strides}, {0}, s.masks), 1e-3);
  // StridedSliceGrad is linear in dy; its gradient is StridedSlice.
  s = ToSpec({Sl(4, 0, -2)});
  EXPECT_GRAD_OK(OpGradientError("StridedSliceGrad", {I32({6}), s.begin, s.end, s.strides, Doubles(S({2}))}, {4},
                                 s.masks),
                 1e-8);
}

}  // namespace
}  // namespace dflow
