// GatherV2, UnsortedSegmentSum and DynamicStitch — the ops that move rows by index — and their
// gradients. Every index is checked before anything is read or written: an index out of range
// is InvalidArgument naming the op, the position of the index and the valid range.
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "framework/op_kernel.h"
#include "graph/gradients.h"
#include "ops/array/array_ops.h"
#include "ops/array/array_util.h"
#include "ops/array/grad_util.h"

namespace dflow {
namespace {

using namespace ::dflow::array;  // NOLINT: the family's own helpers

// "1,2": the multi-index of flat position `i` in `s`, for error messages.
std::string IndexString(const TensorShape& s, int64_t i) {
  std::vector<int64_t> idx(s.dims());
  for (int d = s.dims() - 1; d >= 0; --d) {
    idx[d] = s.dim_size(d) == 0 ? 0 : i % s.dim_size(d);
    i = s.dim_size(d) == 0 ? i : i / s.dim_size(d);
  }
  return absl::StrJoin(idx, ",");
}

// Calls fn(const Index*) with the data of an int32 or int64 index tensor.
template <typename Fn>
bool VisitIndices(const Tensor& t, Fn&& fn) {
  if (t.dtype() == DT_INT32) {
    fn(t.data<int32_t>());
    return true;
  }
  if (t.dtype() == DT_INT64) {
    fn(t.data<int64_t>());
    return true;
  }
  return false;
}

// ---- GatherV2 ----

Status GatherV2Shape(InferenceContext* c) {
  PartialTensorShape axis_shape;
  RETURN_IF_ERROR(c->WithRank(c->input(2), 0, &axis_shape));
  const PartialTensorShape& params = c->input(0);
  const PartialTensorShape& indices = c->input(1);
  if (params.dims() == 0) return errors::InvalidArgument("params must be at least 1 dimensional");
  int64_t batch_dims = 0, axis = 0;
  RETURN_IF_ERROR(c->GetAttr("batch_dims", &batch_dims));
  ASSIGN_OR_RETURN(bool known_axis, ConstIndexScalar(c, 2, "axis", &axis));
  if (params.unknown_rank() || indices.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  if (batch_dims < 0) batch_dims += indices.dims();
  if (batch_dims < 0 || batch_dims > indices.dims()) {
    return errors::InvalidArgument("batch_dims must be in [-", indices.dims(), ", ", indices.dims(),
                                   "] for indices of rank ", indices.dims());
  }
  const int rank = params.dims() + indices.dims() - 1 - static_cast<int>(batch_dims);
  if (!known_axis) {
    c->set_output(0, PartialTensorShape::UnknownOfRank(rank));
    return absl::OkStatus();
  }
  int a = 0;
  RETURN_IF_ERROR(CanonicalAxis(axis, params.dims(), "GatherV2: axis", &a));
  if (batch_dims > a) {
    return errors::InvalidArgument("batch_dims (", batch_dims, ") must be less than or equal to axis (", a, ")");
  }
  std::vector<int64_t> dims(params.dim_sizes().begin(), params.dim_sizes().begin() + a);
  dims.insert(dims.end(), indices.dim_sizes().begin() + batch_dims, indices.dim_sizes().end());
  dims.insert(dims.end(), params.dim_sizes().begin() + a + 1, params.dim_sizes().end());
  ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(dims));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

class GatherV2Op : public OpKernel {
 public:
  explicit GatherV2Op(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("batch_dims", &batch_dims_)); }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    OP_REQUIRES(ctx, params.dims() >= 1,
                KernelError(*this, "params must be at least 1 dimensional, got shape ", ShapeStr(params)));
    int64_t axis = 0;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, ReadIndexScalar(ctx->input(2), "axis", &axis)));
    int a = 0;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, CanonicalAxis(axis, params.dims(), "axis", &a)));
    int64_t bd = batch_dims_ < 0 ? batch_dims_ + indices.dims() : batch_dims_;
    OP_REQUIRES(ctx, bd >= 0 && bd <= indices.dims(),
                KernelError(*this, "batch_dims ", batch_dims_, " must be in [-", indices.dims(), ", ", indices.dims(),
                            "] for indices of shape ", ShapeStr(indices)));
    OP_REQUIRES(ctx, bd <= a, KernelError(*this, "batch_dims (", bd, ") must be less than or equal to axis (", a, ")"));
    for (int d = 0; d < bd; ++d) {
      OP_REQUIRES(ctx, params.dim_size(d) == indices.dim_size(d),
                  KernelError(*this, "params.shape[", d, "]: ", params.dim_size(d),
                              " should be equal to indices.shape[", d, "]: ", indices.dim_size(d)));
    }
    DimVector dims(params.shape().dim_sizes().begin(), params.shape().dim_sizes().begin() + a);
    dims.insert(dims.end(), indices.shape().dim_sizes().begin() + bd, indices.shape().dim_sizes().end());
    dims.insert(dims.end(), params.shape().dim_sizes().begin() + a + 1, params.shape().dim_sizes().end());
    OP_REQUIRES_ASSIGN(ctx, TensorShape out_shape, MakeShape(*this, dims));

    const int64_t batch = DimProduct(params.shape(), 0, static_cast<int>(bd));
    const int64_t outer = DimProduct(params.shape(), static_cast<int>(bd), a);
    const int64_t limit = params.dim_size(a);
    const int64_t inner = DimProduct(params.shape(), a + 1, params.dims());
    const int64_t n = DimProduct(indices.shape(), static_cast<int>(bd), indices.dims());
    const int64_t count = indices.NumElements();
    Status bad;
    VisitIndices(indices, [&](const auto* idx) {
      for (int64_t i = 0; i < count; ++i) {
        if (idx[i] < 0 || idx[i] >= limit) {
          bad = KernelError(*this, "indices[", IndexString(indices.shape(), i), "] = ", idx[i], " is not in [0, ",
                            limit, ")");
          return;
        }
      }
    });
    OP_REQUIRES_OK(ctx, bad);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return;
    bool ok = true;
    VisitIndices(indices, [&](const auto* idx) {
      ok = VisitStorage(params.dtype(), [&]<typename E>() {
        const E* src = StorageData<E>(params);
        E* dst = StorageData<E>(out);
        for (int64_t b = 0; b < batch; ++b) {
          for (int64_t o = 0; o < outer; ++o) {
            const E* rows = src + (b * outer + o) * limit * inner;
            for (int64_t j = 0; j < n; ++j) {
              CopyN(rows + static_cast<int64_t>(idx[b * n + j]) * inner, inner, dst);
              dst += inner;
            }
          }
        }
      });
    });
    OP_REQUIRES(ctx, ok, KernelError(*this, "unsupported type ", DTypeString(params.dtype())));
  }

 private:
  int64_t batch_dims_ = 0;
};

// ---- UnsortedSegmentSum ----

Status UnsortedSegmentSumShape(InferenceContext* c) {
  PartialTensorShape num_shape;
  RETURN_IF_ERROR(c->WithRank(c->input(2), 0, &num_shape));
  const PartialTensorShape& data = c->input(0);
  const PartialTensorShape& ids = c->input(1);
  int64_t num = -1;
  ASSIGN_OR_RETURN(bool known, ConstIndexScalar(c, 2, "num_segments", &num));
  if (known && num < 0) return errors::InvalidArgument("num_segments must be non-negative, got ", num);
  if (data.unknown_rank() || ids.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  bool prefix = ids.dims() <= data.dims();
  for (int d = 0; prefix && d < ids.dims(); ++d) {
    prefix = ids.dim_size(d) < 0 || data.dim_size(d) < 0 || ids.dim_size(d) == data.dim_size(d);
  }
  if (!prefix) {
    return errors::InvalidArgument("data.shape = ", data.DebugString(),
                                   " does not start with segment_ids.shape = ", ids.DebugString());
  }
  std::vector<int64_t> dims = {known ? num : -1};
  dims.insert(dims.end(), data.dim_sizes().begin() + ids.dims(), data.dim_sizes().end());
  ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(dims));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

template <typename T>
class UnsortedSegmentSumOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& ids = ctx->input(1);
    int64_t num = 0;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, ReadIndexScalar(ctx->input(2), "num_segments", &num)));
    OP_REQUIRES(ctx, num >= 0, KernelError(*this, "num_segments must be non-negative, got ", num));
    bool prefix = ids.dims() <= data.dims();
    for (int d = 0; prefix && d < ids.dims(); ++d) prefix = ids.dim_size(d) == data.dim_size(d);
    OP_REQUIRES(ctx, prefix,
                KernelError(*this, "data.shape = ", ShapeStr(data),
                            " does not start with segment_ids.shape = ", ShapeStr(ids)));
    DimVector dims = {num};
    dims.insert(dims.end(), data.shape().dim_sizes().begin() + ids.dims(), data.shape().dim_sizes().end());
    OP_REQUIRES_ASSIGN(ctx, TensorShape out_shape, MakeShape(*this, dims));
    const int64_t n = ids.NumElements();
    const int64_t inner = DimProduct(data.shape(), ids.dims(), data.dims());
    Status bad;
    VisitIndices(ids, [&](const auto* id) {
      for (int64_t i = 0; i < n; ++i) {
        if (id[i] >= num) {
          bad = KernelError(*this, "segment_ids[", IndexString(ids.shape(), i), "] = ", id[i], " is out of range [0, ",
                            num, ")");
          return;
        }
      }
    });
    OP_REQUIRES_OK(ctx, bad);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    T* o = out->data<T>();
    FillN(o, out->NumElements(), T{0});
    const T* in = data.data<T>();
    VisitIndices(ids, [&](const auto* id) {
      for (int64_t i = 0; i < n; ++i) {
        if (id[i] < 0) continue;  // negative ids are dropped
        T* row = o + static_cast<int64_t>(id[i]) * inner;
        const T* src = in + i * inner;
        for (int64_t k = 0; k < inner; ++k) row[k] += src[k];
      }
    });
  }
};

// ---- DynamicStitch ----

Status DynamicStitchShape(InferenceContext* c) {
  const int n = c->num_inputs() / 2;
  PartialTensorShape inner;  // the shape every data[i] has after indices[i]'s dimensions
  bool all_known = true;
  int64_t max_index = -1;
  for (int i = 0; i < n; ++i) {
    const PartialTensorShape& idx = c->input(i);
    const PartialTensorShape& data = c->input(n + i);
    if (const Tensor* t = c->input_tensor(i)) {
      for (int32_t v : t->flat<int32_t>()) {
        if (v < 0) return errors::InvalidArgument("DynamicStitch: indices[", i, "] contains negative index ", v);
        max_index = std::max<int64_t>(max_index, v);
      }
    } else {
      all_known = false;
    }
    if (idx.unknown_rank() || data.unknown_rank()) continue;
    bool prefix = idx.dims() <= data.dims();
    for (int d = 0; prefix && d < idx.dims(); ++d) {
      prefix = idx.dim_size(d) < 0 || data.dim_size(d) < 0 || idx.dim_size(d) == data.dim_size(d);
    }
    if (!prefix) {
      return errors::InvalidArgument("DynamicStitch: data[", i, "].shape = ", data.DebugString(),
                                     " does not start with indices[", i, "].shape = ", idx.DebugString());
    }
    std::vector<int64_t> rest(data.dim_sizes().begin() + idx.dims(), data.dim_sizes().end());
    ASSIGN_OR_RETURN(PartialTensorShape r, PartialTensorShape::FromDims(rest));
    auto merged = inner.MergeWith(r);
    if (!merged.ok()) {
      return errors::InvalidArgument("DynamicStitch: data[", i, "].shape = ", data.DebugString(),
                                     " does not end with the constant shape ", inner.DebugString(),
                                     " of the other inputs");
    }
    inner = *merged;
  }
  if (inner.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  std::vector<int64_t> dims = {all_known ? max_index + 1 : -1};
  dims.insert(dims.end(), inner.dim_sizes().begin(), inner.dim_sizes().end());
  ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(dims));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

class DynamicStitchOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const int n = num_inputs() / 2;
    const Tensor& idx0 = ctx->input(0);
    const Tensor& data0 = ctx->input(n);
    OP_REQUIRES(ctx, data0.dims() >= idx0.dims(),
                KernelError(*this, "data[0].shape = ", ShapeStr(data0),
                            " does not start with indices[0].shape = ", ShapeStr(idx0)));
    TensorShape inner;
    for (int d = idx0.dims(); d < data0.dims(); ++d) inner.AddDimUnchecked(data0.dim_size(d));
    int64_t max_index = -1;
    for (int i = 0; i < n; ++i) {
      const Tensor& idx = ctx->input(i);
      const Tensor& data = ctx->input(n + i);
      bool ok = data.dims() == idx.dims() + inner.dims();
      for (int d = 0; ok && d < idx.dims(); ++d) ok = data.dim_size(d) == idx.dim_size(d);
      for (int d = 0; ok && d < inner.dims(); ++d) ok = data.dim_size(idx.dims() + d) == inner.dim_size(d);
      OP_REQUIRES(ctx, ok,
                  KernelError(*this, "data[", i, "].shape = ", ShapeStr(data), " must be indices[", i, "].shape = ",
                              ShapeStr(idx), " followed by the constant shape ", inner.DebugString(), " of data[0]"));
      const int32_t* v = idx.data<int32_t>();
      for (int64_t j = 0; j < idx.NumElements(); ++j) {
        OP_REQUIRES(ctx, v[j] >= 0,
                    KernelError(*this, "indices[", i, "][", IndexString(idx.shape(), j), "] = ", v[j], " is negative"));
        max_index = std::max<int64_t>(max_index, v[j]);
      }
    }
    DimVector dims = {max_index + 1};
    dims.insert(dims.end(), inner.dim_sizes().begin(), inner.dim_sizes().end());
    OP_REQUIRES_ASSIGN(ctx, TensorShape out_shape, MakeShape(*this, dims));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    const int64_t row = inner.num_elements();
    const bool ok = VisitStorage(data0.dtype(), [&]<typename E>() {
      E* dst = StorageData<E>(out);
      FillN(dst, out->NumElements(), E{});  // rows no index names stay zero
      for (int i = 0; i < n; ++i) {
        const int32_t* v = ctx->input(i).data<int32_t>();
        const E* src = StorageData<E>(ctx->input(n + i));
        for (int64_t j = 0; j < ctx->input(i).NumElements(); ++j) CopyN(src + j * row, row, dst + v[j] * row);
      }
    });
    OP_REQUIRES(ctx, ok, KernelError(*this, "unsupported type ", DTypeString(data0.dtype())));
  }
};

// ---- gradients ----

// A scalar int32 holding element `i` of the 1-D int32 tensor `v`.
NodeOut Element(GraphBuilder* b, const NodeOut& v, const NodeOut& i1) {
  return b->Op("Reshape", {b->Op("Slice", {v, i1, IndexConst(b, DT_INT32, {1})}), IndexConst(b, DT_INT32, {})});
}

// The axis of a GatherV2 as an int32 scalar in [0, rank): a constant when it is one (then
// *static_axis holds it), else computed in the graph.
NodeOut GatherAxis(GraphBuilder* b, const NodeOut& params, const NodeOut& axis, int64_t* static_axis) {
  *static_axis = -1;
  if (const Tensor* t = ConstValue(axis); t != nullptr) {
    int64_t a = 0;
    const PartialTensorShape& ps = StaticShape(params);
    if (ReadIndexScalar(*t, "axis", &a).ok()) {
      if (a < 0 && !ps.unknown_rank()) a += ps.dims();
      if (a >= 0) {
        *static_axis = a;
        return b->Scalar(DT_INT32, static_cast<double>(a));
      }
    }
  }
  NodeOut a32 = ValueType(axis) == DT_INT32 ? axis : b->Op("Cast", {axis}, {{"DstT", DT_INT32}});
  // A negative axis counts from the end: add the rank where it is negative.
  NodeOut negative = b->Op("Cast", {b->Op("Less", {a32, b->Scalar(DT_INT32, 0)})}, {{"DstT", DT_INT32}});
  return b->Op("AddV2", {a32, b->Op("Mul", {negative, b->Op("Rank", {params})})});
}

// The product of the entries [begin, begin + size) of the int32 vector `v` (size -1: to the
// end), as an int32 scalar; 1 for none.
NodeOut ProdOfSlice(GraphBuilder* b, const NodeOut& v, const NodeOut& begin, const NodeOut& size) {
  return b->Op("Prod", {b->Op("Slice", {v, begin, size}), IndexConst(b, DT_INT32, {0})});
}

// GatherV2 with batch_dims = k: out[b, o, n, i] = params[b, o, indices[b, n], i], where b runs
// over the k batch dimensions, o over the dimensions up to axis, n over the rest of indices and
// i over the dimensions after axis. The gradient offsets each batch's indices by b * L (L the
// size of the gathered dimension), sums the [B N, O, I] gradient rows into B L segments and
// puts the dimensions back in place.
Status BatchGatherGrad(GradContext* c, int64_t batch_dims) {
  GraphBuilder* b = c->b;
  const NodeOut params = c->inputs[0], indices = c->inputs[1];
  const PartialTensorShape& is_static = StaticShape(indices);
  int64_t bd = batch_dims;
  if (bd < 0) {
    if (is_static.unknown_rank()) {
      return errors::InvalidArgument("the gradient of GatherV2 with a negative batch_dims (", batch_dims,
                                     ") needs indices of known rank");
    }
    bd += is_static.dims();
  }
  if (bd < 0) {
    return errors::InvalidArgument("batch_dims ", batch_dims, " is out of range for indices of rank ",
                                   is_static.dims());
  }
  int64_t static_axis = -1;
  NodeOut a32 = GatherAxis(b, params, c->inputs[2], &static_axis);
  NodeOut ps = ShapeOf(b, params, DT_INT32), is = ShapeOf(b, indices, DT_INT32);
  NodeOut one = b->Scalar(DT_INT32, 1);
  NodeOut a1 = b->Op("Reshape", {a32, IndexConst(b, DT_INT32, {1})});
  NodeOut bd1 = IndexConst(b, DT_INT32, {bd});
  NodeOut to_end = IndexConst(b, DT_INT32, {-1});
  NodeOut batch = ProdOfSlice(b, ps, IndexConst(b, DT_INT32, {0}), bd1);
  NodeOut outer = ProdOfSlice(b, ps, bd1, b->Op("Sub", {a1, bd1}));
  NodeOut limit = Element(b, ps, a1);
  NodeOut inner = ProdOfSlice(b, ps, b->Op("AddV2", {a1, one}), to_end);
  NodeOut n = ProdOfSlice(b, is, bd1, to_end);
  auto vec = [&](const std::vector<NodeOut>& dims) { return b->Op("Pack", dims); };
  NodeOut swap = IndexConst(b, DT_INT32, {0, 2, 1, 3});
  // [B, O, N, I] -> [B, N, O, I] -> rows of [O, I].
  NodeOut grad = b->Op("Reshape", {c->grad_outputs[0], vec({batch, outer, n, inner})});
  NodeOut values = b->Op("Reshape", {b->Op("Transpose", {grad, swap}), vec({b->Scalar(DT_INT32, -1), outer, inner})});
  NodeOut idx = ValueType(indices) == DT_INT32 ? indices : b->Op("Cast", {indices}, {{"DstT", DT_INT32}});
  NodeOut offsets = b->Op("Reshape", {b->Op("Mul", {b->Op("Range", {b->Scalar(DT_INT32, 0), batch, one}), limit}),
                                      IndexConst(b, DT_INT32, {-1, 1})});
  NodeOut ids = b->Op("Reshape", {b->Op("AddV2", {b->Op("Reshape", {idx, vec({batch, n})}), offsets}), to_end});
  NodeOut sums = b->Op("UnsortedSegmentSum", {values, ids, b->Op("Mul", {batch, limit})});  // [B L, O, I]
  NodeOut back = b->Op("Transpose", {b->Op("Reshape", {sums, vec({batch, limit, outer, inner})}), swap});
  c->grad_inputs[0] = b->Op("Reshape", {back, ps});
  return b->status();
}

// GatherV2 (batch_dims 0): the output gradient summed into the gathered rows with
// UnsortedSegmentSum; for an axis other than 0 the gathered dimension is moved to the front and
// back with Transpose.
Status GatherV2Grad(GradContext* c) {
  GraphBuilder* b = c->b;
  int64_t batch_dims = 0;
  RETURN_IF_ERROR(GetAttr(c->node->attrs(), "batch_dims", &batch_dims));
  if (batch_dims != 0) return BatchGatherGrad(c, batch_dims);
  const NodeOut params = c->inputs[0], indices = c->inputs[1], axis = c->inputs[2];
  const NodeOut grad = c->grad_outputs[0];
  NodeOut params_shape = ShapeOf(b, params, DT_INT32);
  NodeOut size = b->Op("Reshape", {b->Op("Size", {indices}, {{"out_type", DT_INT32}}), IndexConst(b, DT_INT32, {1})});
  NodeOut flat = b->Op("Reshape", {indices, IndexConst(b, DT_INT32, {-1})});
  int64_t a = -1;
  NodeOut a32 = GatherAxis(b, params, axis, &a);
  if (a == 0) {
    NodeOut rest = b->Op("Slice", {params_shape, IndexConst(b, DT_INT32, {1}), IndexConst(b, DT_INT32, {-1})});
    NodeOut values = b->Op("Reshape", {grad, b->Op("ConcatV2", {size, rest, b->Scalar(DT_INT32, 0)})});
    NodeOut num = Element(b, params_shape, IndexConst(b, DT_INT32, {0}));
    // Marked as the dense form of the sparse gradient (values, flat): an optimizer that can
    // update only the gathered rows (tf.IndexedSlices in TensorFlow) takes those instead of
    // the table-sized sum (optimizers::SparseGradientOf).
    c->grad_inputs[0] = b->Op("UnsortedSegmentSum", {values, flat, num}, {{std::string(kSparseGradientAttr), true}});
    return b->status();
  }
  NodeOut one = b->Scalar(DT_INT32, 1);
  NodeOut a1 = b->Op("Reshape", {a32, IndexConst(b, DT_INT32, {1})});
  NodeOut outer_shape = b->Op("Slice", {params_shape, IndexConst(b, DT_INT32, {0}), a1});
  NodeOut inner_shape = b->Op("Slice", {params_shape, b->Op("AddV2", {a1, one}), IndexConst(b, DT_INT32, {-1})});
  NodeOut values_shape = b->Op("ConcatV2", {outer_shape, size, inner_shape, b->Scalar(DT_INT32, 0)});
  NodeOut values = b->Op("Reshape", {grad, values_shape});  // [outer..., N, inner...]
  NodeOut outer_axes = b->Op("Range", {b->Scalar(DT_INT32, 0), a32, one});
  NodeOut inner_start = b->Op("AddV2", {a32, one});
  NodeOut inner_axes =
      b->Op("Range",
            {inner_start, b->Op("AddV2", {inner_start, b->Op("Size", {inner_shape}, {{"out_type", DT_INT32}})}), one});
  NodeOut to_front = b->Op("ConcatV2", {a1, outer_axes, inner_axes, b->Scalar(DT_INT32, 0)});
  NodeOut front = b->Op("Transpose", {values, to_front});  // [N, outer..., inner...]
  NodeOut sums = b->Op("UnsortedSegmentSum", {front, flat, Element(b, params_shape, a1)});
  NodeOut back = b->Op("ConcatV2", {b->Op("AddV2", {outer_axes, one}), IndexConst(b, DT_INT32, {0}), inner_axes,
                                    b->Scalar(DT_INT32, 0)});
  c->grad_inputs[0] = b->Op("Transpose", {sums, back});
  return b->status();
}

// UnsortedSegmentSum: each data row gets the gradient of its segment; rows with a negative id
// were dropped and get zeros (they read an extra zero row padded onto the gradient).
Status UnsortedSegmentSumGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  const NodeOut ids = c->inputs[1], num = c->inputs[2];
  const NodeOut grad = c->grad_outputs[0];
  const DType it = ValueType(ids);
  NodeOut valid = b->Op("Cast", {b->Op("Greater", {ids, b->Scalar(it, -1)})}, {{"DstT", it}});
  NodeOut num_it = ValueType(num) == it ? num : b->Op("Cast", {num}, {{"DstT", it}});
  NodeOut dropped_to = b->Op("Mul", {b->Op("Sub", {b->Scalar(it, 1), valid}), num_it});
  NodeOut mapped = b->Op("AddV2", {b->Op("Mul", {ids, valid}), dropped_to});
  NodeOut paddings;
  const PartialTensorShape& gs = StaticShape(c->outputs[0]);
  if (!gs.unknown_rank()) {
    std::vector<int64_t> p(2 * gs.dims(), 0);
    p[1] = 1;
    ASSIGN_OR_RETURN(Tensor pt, MakeIndexTensor(DT_INT32, p));
    ASSIGN_OR_RETURN(pt, pt.Reshaped(TensorShape{gs.dims(), 2}));
    paddings = b->Const(pt, "paddings");
  } else {
    NodeOut zeros =
        b->Op("Fill", {b->Op("Reshape", {b->Op("Mul", {b->Op("Sub", {b->Op("Rank", {grad}), b->Scalar(DT_INT32, 1)}),
                                                       b->Scalar(DT_INT32, 2)}),
                                         IndexConst(b, DT_INT32, {1})}),
                       b->Scalar(DT_INT32, 0)});
    NodeOut flat = b->Op("ConcatV2", {IndexConst(b, DT_INT32, {0, 1}), zeros, b->Scalar(DT_INT32, 0)});
    paddings = b->Op("Reshape", {flat, IndexConst(b, DT_INT32, {-1, 2})});
  }
  NodeOut padded = b->Op("Pad", {grad, paddings});
  c->grad_inputs[0] = b->Op("GatherV2", {padded, mapped, b->Scalar(DT_INT32, 0)});
  return b->status();
}

// DynamicStitch: data[i] gets the gradient rows its indices name (as in TensorFlow, an index
// that a later input overrides still gets the gradient).
Status DynamicStitchGrad(GradContext* c) {
  const int n = static_cast<int>(c->inputs.size()) / 2;
  for (int i = 0; i < n; ++i) {
    c->grad_inputs[n + i] = c->b->Op("GatherV2", {c->grad_outputs[0], c->inputs[i], c->b->Scalar(DT_INT32, 0)});
  }
  return c->b->status();
}

}  // namespace

void RegisterGatherOps() {
  RegisterOp(OpDefBuilder("GatherV2")
                 .Input("params: Tparams")
                 .Input("indices: Tindices")
                 .Input("axis: Taxis")
                 .Output("output: Tparams")
                 .Attr("batch_dims: int = 0")
                 .Attr("Tparams: type")
                 .Attr("Tindices: {int32, int64}")
                 .Attr("Taxis: {int32, int64}")
                 .SetShapeFn(GatherV2Shape)
                 .Doc("Slices of params along `axis` at the given indices."));
  RegisterOp(OpDefBuilder("UnsortedSegmentSum")
                 .Input("data: T")
                 .Input("segment_ids: Tindices")
                 .Input("num_segments: Tnumsegments")
                 .Output("output: T")
                 .Attr("T: {float, double, int32, int64}")
                 .Attr("Tindices: {int32, int64}")
                 .Attr("Tnumsegments: {int32, int64} = int32")
                 .SetShapeFn(UnsortedSegmentSumShape)
                 .Doc("output[k] = sum of the data rows whose segment id is k; negative ids are dropped."));
  RegisterOp(OpDefBuilder("DynamicStitch")
                 .Input("indices: N * int32")
                 .Input("data: N * T")
                 .Output("merged: T")
                 .Attr("N: int >= 1")
                 .Attr("T: type")
                 .SetShapeFn(DynamicStitchShape)
                 .Doc("merged[indices[i][j]] = data[i][j]; later entries win."));
  RegisterKernel<GatherV2Op>(KernelBuilder("GatherV2"));
  RegisterKernel<UnsortedSegmentSumOp<float>>(KernelBuilder("UnsortedSegmentSum").TypeConstraint<float>("T"));
  RegisterKernel<UnsortedSegmentSumOp<double>>(KernelBuilder("UnsortedSegmentSum").TypeConstraint<double>("T"));
  RegisterKernel<UnsortedSegmentSumOp<int32_t>>(KernelBuilder("UnsortedSegmentSum").TypeConstraint<int32_t>("T"));
  RegisterKernel<UnsortedSegmentSumOp<int64_t>>(KernelBuilder("UnsortedSegmentSum").TypeConstraint<int64_t>("T"));
  RegisterKernel<DynamicStitchOp>(KernelBuilder("DynamicStitch"));
  RegisterGradient("GatherV2", GatherV2Grad);
  RegisterGradient("UnsortedSegmentSum", UnsortedSegmentSumGrad);
  RegisterGradient("DynamicStitch", DynamicStitchGrad);
}

}  // namespace dflow
