// ConcatV2, ConcatOffset, Split, SplitV and their gradients.
//
// Concatenation and splitting along `axis` view each tensor as [outer, axis * inner]: the data
// moves as whole rows of axis * inner elements. A split with outer == 1 shares the input's
// buffer (its pieces are contiguous), so splitting along the first dimension copies nothing.
#include <string>
#include <vector>

#include "framework/op_kernel.h"
#include "graph/gradients.h"
#include "ops/array/array_ops.h"
#include "ops/array/array_util.h"

namespace dflow {
namespace {

using namespace ::dflow::array;  // NOLINT: the family's own helpers

// ---- shape functions ----

Status ConcatV2Shape(InferenceContext* c) {
  const int n = c->num_inputs() - 1;
  int rank = -1;
  for (int i = 0; i < n; ++i) {
    const PartialTensorShape& s = c->input(i);
    if (s.unknown_rank()) continue;
    if (rank == -1) rank = s.dims();
    if (s.dims() != rank) {
      return errors::InvalidArgument("ConcatV2: all inputs must have the same rank, but one has rank ", rank,
                                     " and values[", i, "] has shape ", s.DebugString());
    }
  }
  if (rank == 0) return errors::InvalidArgument("Can't concatenate scalars (use Pack/Stack instead)");
  PartialTensorShape axis_shape;
  RETURN_IF_ERROR(c->WithRank(c->input(n), 0, &axis_shape));
  int64_t axis = 0;
  ASSIGN_OR_RETURN(bool known_axis, ConstIndexScalar(c, n, "axis", &axis));
  if (rank == -1) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  if (!known_axis) {
    c->set_output(0, PartialTensorShape::UnknownOfRank(rank));
    return absl::OkStatus();
  }
  int a = 0;
  RETURN_IF_ERROR(CanonicalAxis(axis, rank, "ConcatV2: axis", &a));
  std::vector<int64_t> dims(rank, -1);
  int64_t concat_dim = 0;
  for (int i = 0; i < n; ++i) {
    const PartialTensorShape& s = c->input(i);
    if (s.unknown_rank()) {
      concat_dim = -1;
      continue;
    }
    for (int d = 0; d < rank; ++d) {
      const int64_t v = s.dim_size(d);
      if (d == a) {
        concat_dim = (concat_dim < 0 || v < 0) ? -1 : concat_dim + v;
      } else if (v >= 0) {
        if (dims[d] >= 0 && dims[d] != v) {
          return errors::InvalidArgument("ConcatV2: dimension ", d, " of the inputs must match, but it is ", dims[d],
                                         " in an earlier input and values[", i, "] has shape ", s.DebugString());
        }
        dims[d] = v;
      }
    }
  }
  dims[a] = concat_dim;
  ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(dims));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

Status ConcatOffsetShape(InferenceContext* c) {
  PartialTensorShape s;
  RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &s));
  for (int i = 1; i < c->num_inputs(); ++i) {
    RETURN_IF_ERROR(c->WithRank(c->input(i), 1, &s));
    c->set_output(i - 1, s);
  }
  return absl::OkStatus();
}

// The sizes of SplitV's pieces: `sizes` with its single -1 resolved against `dim` (-1 when the
// dimension is unknown: then the -1 stays unknown).
StatusOr<std::vector<int64_t>> ResolveSplitSizes(const DimVector& sizes, int64_t dim, int64_t num_split) {
  if (static_cast<int64_t>(sizes.size()) != num_split) {
    return errors::InvalidArgument("size_splits has ", sizes.size(), " entries but num_split is ", num_split);
  }
  int unknown = -1;
  int64_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (unknown != -1) {
        return errors::InvalidArgument("size_splits may contain at most one -1, found at ", unknown, " and ", i);
      }
      unknown = static_cast<int>(i);
    } else if (sizes[i] < 0) {
      return errors::InvalidArgument("size_splits[", i, "] = ", sizes[i], " must be >= 0 (or -1 once)");
    } else {
      total += sizes[i];
      if (total > kMaxElements) return errors::InvalidArgument("size_splits sum to more than ", kMaxElements);
    }
  }
  std::vector<int64_t> out(sizes.begin(), sizes.end());
  if (dim < 0) return out;
  if (unknown == -1 ? total != dim : total > dim) {
    return errors::InvalidArgument(
        "Determined shape must either match input shape along split_dim exactly if fully specified, or be less "
        "than the size of the input along split_dim if not fully specified: size_splits sum to ",
        total, " for a split dimension of size ", dim);
  }
  if (unknown != -1) out[unknown] = dim - total;
  return out;
}

enum class SplitKind { kEven, kSizes, kUnknownSizes };

Status SplitShapeCommon(InferenceContext* c, int value_input, int dim_input, SplitKind kind, const DimVector& sizes) {
  int64_t num_split = 0;
  RETURN_IF_ERROR(c->GetAttr("num_split", &num_split));
  PartialTensorShape dim_shape;
  RETURN_IF_ERROR(c->WithRank(c->input(dim_input), 0, &dim_shape));
  const PartialTensorShape& value = c->input(value_input);
  int64_t axis = 0;
  ASSIGN_OR_RETURN(bool known_axis, ConstIndexScalar(c, dim_input, "split_dim", &axis));
  if (value.unknown_rank() || !known_axis) {
    PartialTensorShape s = value.unknown_rank() ? PartialTensorShape()
                                                : PartialTensorShape::UnknownOfRank(value.dims());
    if (value.dims() == 0) return errors::InvalidArgument("Can't split a scalar");
    for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, s);
    return absl::OkStatus();
  }
  if (value.dims() == 0) return errors::InvalidArgument("Can't split a scalar");
  int a = 0;
  RETURN_IF_ERROR(CanonicalAxis(axis, value.dims(), "split_dim", &a));
  const int64_t dim = value.dim_size(a);
  std::vector<int64_t> pieces(num_split, -1);
  if (kind == SplitKind::kEven) {
    if (dim >= 0) {
      if (dim % num_split != 0) {
        return errors::InvalidArgument("Number of ways to split should evenly divide the split dimension, but got "
                                       "split_dim ",
                                       a, " (size = ", dim, ") and num_split ", num_split);
      }
      pieces.assign(num_split, dim / num_split);
    }
  } else if (kind == SplitKind::kSizes) {
    ASSIGN_OR_RETURN(pieces, ResolveSplitSizes(sizes, dim, num_split));
  }
  for (int i = 0; i < c->num_outputs(); ++i) {
    std::vector<int64_t> d(value.dim_sizes().begin(), value.dim_sizes().end());
    d[a] = pieces[i];
    ASSIGN_OR_RETURN(PartialTensorShape s, PartialTensorShape::FromDims(d));
    c->set_output(i, std::move(s));
  }
  return absl::OkStatus();
}

Status SplitShape(InferenceContext* c) { return SplitShapeCommon(c, 1, 0, SplitKind::kEven, {}); }

Status SplitVShape(InferenceContext* c) {
  PartialTensorShape sizes_shape;
  RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &sizes_shape));
  DimVector sizes;
  ASSIGN_OR_RETURN(bool known, ConstIndexVector(c, 1, "size_splits", &sizes));
  return SplitShapeCommon(c, 0, 2, known ? SplitKind::kSizes : SplitKind::kUnknownSizes, sizes);
}

// ---- kernels ----

class ConcatV2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const int n = num_inputs() - 1;
    int64_t axis = 0;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, ReadIndexScalar(ctx->input(n), "axis", &axis)));
    const Tensor& first = ctx->input(0);
    const int rank = first.dims();
    OP_REQUIRES(ctx, rank > 0, KernelError(*this, "can't concatenate scalars (use Pack/Stack instead)"));
    int a = 0;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, CanonicalAxis(axis, rank, "axis", &a)));
    int64_t concat = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& t = ctx->input(i);
      OP_REQUIRES(ctx, t.dims() == rank,
                  KernelError(*this, "ranks of all input tensors should match: shape[0] = ", ShapeStr(first),
                              " vs. shape[", i, "] = ", ShapeStr(t)));
      for (int d = 0; d < rank; ++d) {
        OP_REQUIRES(ctx, d == a || t.dim_size(d) == first.dim_size(d),
                    KernelError(*this, "dimensions of inputs should match: shape[0] = ", ShapeStr(first), " vs. shape[",
                                i, "] = ", ShapeStr(t)));
      }
      concat += t.dim_size(a);
      OP_REQUIRES(ctx, concat <= kMaxElements, KernelError(*this, "the output would have too many elements"));
    }
    DimVector dims(first.shape().dim_sizes().begin(), first.shape().dim_sizes().end());
    dims[a] = concat;
    OP_REQUIRES_ASSIGN(ctx, TensorShape out_shape, MakeShape(*this, dims));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return;
    const int64_t outer = DimProduct(first.shape(), 0, a);
    const int64_t inner = DimProduct(first.shape(), a + 1, rank);
    const bool ok = VisitStorage(first.dtype(), [&]<typename E>() {
      E* dst = StorageData<E>(out);
      for (int64_t o = 0; o < outer; ++o) {
        for (int i = 0; i < n; ++i) {
          const Tensor& t = ctx->input(i);
          const int64_t row = t.dim_size(a) * inner;
          CopyN(StorageData<E>(t) + o * row, row, dst);
          dst += row;
        }
      }
    });
    OP_REQUIRES(ctx, ok, KernelError(*this, "unsupported type ", DTypeString(first.dtype())));
  }
};

class ConcatOffsetOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    int64_t axis = 0;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, ReadIndexScalar(ctx->input(0), "concat_dim", &axis)));
    const int n = num_inputs() - 1;
    DimVector first;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, ReadIndexVector(ctx->input(1), "shape[0]", &first)));
    int a = 0;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, CanonicalAxis(axis, static_cast<int>(first.size()), "concat_dim", &a)));
    int64_t offset = 0;
    for (int i = 0; i < n; ++i) {
      DimVector s;
      OP_REQUIRES_OK(ctx, KernelAnnotate(*this, ReadIndexVector(ctx->input(i + 1), "shape", &s)));
      OP_REQUIRES(ctx, s.size() == first.size(),
                  KernelError(*this, "input ", i, " has ", s.size(), " dimensions but input 0 has ", first.size()));
      for (size_t d = 0; d < s.size(); ++d) {
        OP_REQUIRES(ctx, static_cast<int>(d) == a || s[d] == first[d],
                    KernelError(*this, "input dimension ", d, " mismatch: ", s[d], " vs. ", first[d], " (input ", i,
                                ")"));
      }
      Tensor* out = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, TensorShape{static_cast<int64_t>(s.size())}, &out));
      for (size_t d = 0; d < s.size(); ++d) {
        const int64_t v = static_cast<int>(d) == a ? offset : 0;
        if (out->dtype() == DT_INT64) {
          out->data<int64_t>()[d] = v;
        } else {
          out->data<int32_t>()[d] = static_cast<int32_t>(v);
        }
      }
      offset += s[a];
    }
  }
};

// Splits `value` along axis `a` into pieces of the given sizes (which sum to its dimension).
void SplitInto(OpKernelContext* ctx, const OpKernel& k, const Tensor& value, int a,
               const std::vector<int64_t>& pieces) {
  const int rank = value.dims();
  const int64_t outer = DimProduct(value.shape(), 0, a);
  const int64_t inner = DimProduct(value.shape(), a + 1, rank);
  auto piece_shape = [&](int64_t size) {
    TensorShape s;
    for (int d = 0; d < rank; ++d) s.AddDimUnchecked(d == a ? size : value.dim_size(d));
    return s;
  };
  if (value.NumElements() == 0) {
    for (size_t i = 0; i < pieces.size(); ++i) {
      Tensor* unused = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(static_cast<int>(i), piece_shape(pieces[i]), &unused));
    }
    return;
  }
  if (outer == 1) {
    // Contiguous pieces: share the input's buffer.
    OP_REQUIRES_ASSIGN(ctx, Tensor rows, value.Reshaped(TensorShape{value.dim_size(a), inner}));
    int64_t start = 0;
    for (size_t i = 0; i < pieces.size(); ++i) {
      OP_REQUIRES_ASSIGN(ctx, Tensor piece, rows.Slice(start, start + pieces[i]));
      OP_REQUIRES_ASSIGN(ctx, Tensor shaped, piece.Reshaped(piece_shape(pieces[i])));
      ctx->set_output(static_cast<int>(i), std::move(shaped));
      start += pieces[i];
    }
    return;
  }
  std::vector<Tensor*> outs(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    OP_REQUIRES_OK(ctx, ctx->allocate_output(static_cast<int>(i), piece_shape(pieces[i]), &outs[i]));
  }
  const bool ok = VisitStorage(value.dtype(), [&]<typename E>() {
    const E* src = StorageData<E>(value);
    for (int64_t o = 0; o < outer; ++o) {
      for (size_t i = 0; i < pieces.size(); ++i) {
        const int64_t row = pieces[i] * inner;
        CopyN(src, row, StorageData<E>(outs[i]) + o * row);
        src += row;
      }
    }
  });
  OP_REQUIRES(ctx, ok, KernelError(k, "unsupported type ", DTypeString(value.dtype())));
}

class SplitOp : public OpKernel {
 public:
  explicit SplitOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    int64_t axis = 0;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, ReadIndexScalar(ctx->input(0), "split_dim", &axis)));
    const Tensor& value = ctx->input(1);
    OP_REQUIRES(ctx, value.dims() > 0, KernelError(*this, "can't split a scalar"));
    int a = 0;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, CanonicalAxis(axis, value.dims(), "split_dim", &a)));
    const int64_t num_split = num_outputs();
    const int64_t dim = value.dim_size(a);
    OP_REQUIRES(ctx, dim % num_split == 0,
                KernelError(*this,
                            "Number of ways to split should evenly divide the split dimension, but got "
                            "split_dim ",
                            a, " (size = ", dim, ") and num_split ", num_split, " for a value of shape ",
                            ShapeStr(value)));
    SplitInto(ctx, *this, value, a, std::vector<int64_t>(num_split, dim / num_split));
  }
};

class SplitVOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(0);
    DimVector sizes;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, ReadIndexVector(ctx->input(1), "size_splits", &sizes)));
    int64_t axis = 0;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, ReadIndexScalar(ctx->input(2), "split_dim", &axis)));
    OP_REQUIRES(ctx, value.dims() > 0, KernelError(*this, "can't split a scalar"));
    int a = 0;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, CanonicalAxis(axis, value.dims(), "split_dim", &a)));
    auto pieces = ResolveSplitSizes(sizes, value.dim_size(a), num_outputs());
    OP_REQUIRES(ctx, pieces.ok(),
                KernelAnnotate(*this, errors::Annotate(pieces.status(),
                                                       absl::StrCat("value of shape ", ShapeStr(value), ": "))));
    SplitInto(ctx, *this, value, a, *pieces);
  }
};

// ---- gradients ----

// The sizes of every input along `axis` when the static shapes know them all.
bool StaticConcatSizes(const GradContext* c, int n, int64_t axis, std::vector<int64_t>* sizes, int* canonical) {
  const PartialTensorShape& s0 = c->inputs[0].node->output_shape(c->inputs[0].index);
  if (s0.unknown_rank() || !CanonicalAxis(axis, s0.dims(), "axis", canonical).ok()) return false;
  for (int i = 0; i < n; ++i) {
    const PartialTensorShape& s = c->inputs[i].node->output_shape(c->inputs[i].index);
    if (s.unknown_rank() || s.dims() != s0.dims() || s.dim_size(*canonical) < 0) return false;
    sizes->push_back(s.dim_size(*canonical));
  }
  return true;
}

// ConcatV2: each input's gradient is its slice of the output gradient — one SplitV when the
// axis and the sizes along it are known statically, else Slice at the offsets ConcatOffset
// computes.
Status ConcatV2Grad(GradContext* c) {
  GraphBuilder* b = c->b;
  const int n = static_cast<int>(c->inputs.size()) - 1;
  const NodeOut grad = c->grad_outputs[0];
  const NodeOut axis = c->inputs[n];
  const Tensor* axis_value = axis.node->const_value();
  std::vector<int64_t> sizes;
  int a = 0;
  int64_t axis_int = 0;
  if (axis.index == 0 && axis_value != nullptr && ReadIndexScalar(*axis_value, "axis", &axis_int).ok() &&
      StaticConcatSizes(c, n, axis_int, &sizes, &a)) {
    ASSIGN_OR_RETURN(Tensor sizes_t, MakeIndexTensor(DT_INT64, sizes));
    Node* split = b->AddNode("SplitV", {grad, b->Const(sizes_t, "sizes"), b->Scalar(DT_INT32, a, "axis")},
                             {{"num_split", int64_t{n}}});
    if (split == nullptr) return b->status();
    for (int i = 0; i < n; ++i) c->grad_inputs[i] = {split, i};
    return absl::OkStatus();
  }
  NodeOut axis32 = ValueType(axis) == DT_INT32 ? axis : b->Op("Cast", {axis}, {{"DstT", DT_INT32}});
  std::vector<NodeOut> offset_inputs = {axis32};
  std::vector<NodeOut> shapes;
  for (int i = 0; i < n; ++i) {
    shapes.push_back(b->Op("Shape", {c->inputs[i]}, {{"out_type", DT_INT32}}));
    offset_inputs.push_back(shapes.back());
  }
  Node* offsets = b->AddNode("ConcatOffset", offset_inputs);
  if (offsets == nullptr) return b->status();
  for (int i = 0; i < n; ++i) c->grad_inputs[i] = b->Op("Slice", {grad, {offsets, i}, shapes[i]});
  return b->status();
}

// Split/SplitV: the gradients of the pieces concatenated (zeros where none flows).
NodeOut ConcatGrads(GradContext* c, const NodeOut& axis) {
  std::vector<NodeOut> parts;
  for (size_t i = 0; i < c->outputs.size(); ++i) parts.push_back(c->GradOrZeros(static_cast<int>(i)));
  if (parts.size() == 1) return parts[0];
  parts.push_back(axis);
  return c->b->Op("ConcatV2", parts);
}

Status SplitGrad(GradContext* c) {
  c->grad_inputs[1] = ConcatGrads(c, c->inputs[0]);
  return c->b->status();
}

Status SplitVGrad(GradContext* c) {
  c->grad_inputs[0] = ConcatGrads(c, c->inputs[2]);
  return c->b->status();
}

}  // namespace

void RegisterConcatSplitOps() {
  RegisterOp(OpDefBuilder("ConcatV2")
                 .Input("values: N * T")
                 .Input("axis: Tidx")
                 .Output("output: T")
                 .Attr("N: int >= 2")
                 .Attr("T: type")
                 .Attr("Tidx: {int32, int64} = int32")
                 .SetShapeFn(ConcatV2Shape)
                 .Doc("Concatenates tensors along one dimension."));
  RegisterOp(OpDefBuilder("ConcatOffset")
                 .Input("concat_dim: int32")
                 .Input("shape: N * shape_type")
                 .Output("offset: N * shape_type")
                 .Attr("N: int >= 2")
                 .Attr("shape_type: {int32, int64} = int32")
                 .SetShapeFn(ConcatOffsetShape)
                 .Doc("The offset of each input of a concatenation within its output (for gradients)."));
  RegisterOp(OpDefBuilder("Split")
                 .Input("split_dim: int32")
                 .Input("value: T")
                 .Output("output: num_split * T")
                 .Attr("num_split: int >= 1")
                 .Attr("T: type")
                 .SetShapeFn(SplitShape)
                 .Doc("Splits a tensor into num_split equal pieces along split_dim."));
  RegisterOp(OpDefBuilder("SplitV")
                 .Input("value: T")
                 .Input("size_splits: Tlen")
                 .Input("split_dim: int32")
                 .Output("output: num_split * T")
                 .Attr("num_split: int >= 1")
                 .Attr("T: type")
                 .Attr("Tlen: {int32, int64} = int64")
                 .SetShapeFn(SplitVShape)
                 .Doc("Splits a tensor into pieces of the given sizes (one may be -1) along split_dim."));
  RegisterKernel<ConcatV2Op>(KernelBuilder("ConcatV2"));
  RegisterKernel<ConcatOffsetOp>(KernelBuilder("ConcatOffset"));
  RegisterKernel<SplitOp>(KernelBuilder("Split"));
  RegisterKernel<SplitVOp>(KernelBuilder("SplitV"));
  RegisterGradient("ConcatV2", ConcatV2Grad);
  RegisterNoGradient("ConcatOffset");
  RegisterGradient("Split", SplitGrad);
  RegisterGradient("SplitV", SplitVGrad);
}

}  // namespace dflow
