// Transpose, InvertPermutation, ExpandDims, Squeeze and their gradients: ops that only
// rearrange dimensions. ExpandDims and Squeeze never copy (the output shares the input's
// buffer); nor does a Transpose by the identity permutation.
#include <algorithm>
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

// Checks `perm` against a rank-n input, as TensorFlow's Transpose does: entries in [-n, 0) count
// from the end (rewritten in place); any other entry outside [0, n) is out of range. With
// `complete` (the kernel; TensorFlow's shape function leaves it out), every dim must be named.
Status CheckPermutation(DimVector& perm, int64_t n, bool complete = true) {
  if (static_cast<int64_t>(perm.size()) != n) {
    return errors::InvalidArgument("transpose expects a vector of size ", n, ". But input(1) is a vector of size ",
                                   perm.size());
  }
  std::vector<char> seen(perm.size(), 0);
  for (int64_t& d : perm) {
    if (d < 0) d += n;
    if (d < 0 || d >= n) return errors::InvalidArgument(d, " is out of range [0 .. ", n, ")");
    seen[d] = 1;
  }
  for (int64_t i = 0; complete && i < n; ++i) {
    if (!seen[i]) return errors::InvalidArgument(i, " is missing from {", absl::StrJoin(perm, ","), "}.");
  }
  return absl::OkStatus();
}

// ---- Transpose ----

Status TransposeShape(InferenceContext* c) {
  PartialTensorShape ps;
  RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &ps));
  const PartialTensorShape& in = c->input(0);
  int rank = in.dims();
  if (rank >= 0 && ps.dim_size(0) >= 0 && ps.dim_size(0) != rank) {
    return errors::InvalidArgument("transpose expects a vector of size ", rank, ". But input(1) is a vector of size ",
                                   ps.dim_size(0));
  }
  if (rank < 0 && ps.dim_size(0) >= 0) rank = static_cast<int>(ps.dim_size(0));
  DimVector perm;
  ASSIGN_OR_RETURN(bool known, ConstIndexVector(c, 1, "perm", &perm));
  if (rank < 0) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  if (!known) {
    c->set_output(0, PartialTensorShape::UnknownOfRank(rank));
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(CheckPermutation(perm, rank, /*complete=*/false));
  std::vector<int64_t> dims(rank, -1);
  for (int d = 0; d < rank; ++d) {
    if (!in.unknown_rank()) dims[d] = in.dim_size(static_cast<int>(perm[d]));
  }
  ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(dims));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

class TransposeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    DimVector perm;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, ReadIndexVector(ctx->input(1), "perm", &perm)));
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, errors::Annotate(CheckPermutation(perm, input.dims()),
                                                               absl::StrCat("input shape ", ShapeStr(input), ": "))));
    bool identity = true;
    for (size_t d = 0; d < perm.size(); ++d) identity &= perm[d] == static_cast<int64_t>(d);
    if (identity) {
      ctx->set_output(0, input);
      return;
    }
    const DimVector in_strides = Strides(input.shape());
    TensorShape out_shape;
    DimVector steps(perm.size());
    for (size_t d = 0; d < perm.size(); ++d) {
      out_shape.AddDimUnchecked(input.dim_size(static_cast<int>(perm[d])));
      steps[d] = in_strides[perm[d]];
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    const bool ok = VisitStorage(input.dtype(), [&]<typename E>() {
      GatherBox(StorageData<E>(input), 0, out_shape.dim_sizes(), steps, StorageData<E>(out));
    });
    OP_REQUIRES(ctx, ok, KernelError(*this, "unsupported type ", DTypeString(input.dtype())));
  }
};

// ---- InvertPermutation ----

template <typename T>
class InvertPermutationOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    OP_REQUIRES(ctx, x.dims() == 1,
                KernelError(*this, "invert_permutation expects a 1D vector, got shape ", ShapeStr(x)));
    const int64_t n = x.NumElements();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out));
    const T* in = x.data<T>();
    T* y = out->data<T>();
    std::vector<char> seen(n, 0);
    for (int64_t i = 0; i < n; ++i) {
      const T d = in[i];
      OP_REQUIRES(ctx, d >= 0 && d < n, KernelError(*this, "x[", i, "] = ", d, " is not between 0 and ", n));
      OP_REQUIRES(ctx, !seen[d], KernelError(*this, d, " is duplicated in the input"));
      seen[d] = 1;
      y[d] = static_cast<T>(i);
    }
  }
};

Status InvertPermutationShape(InferenceContext* c) {
  PartialTensorShape s;
  RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &s));
  c->set_output(0, s);
  return absl::OkStatus();
}

// ---- ExpandDims, Squeeze ----

Status ExpandDimsShape(InferenceContext* c) {
  const PartialTensorShape& dim_shape = c->input(1);
  if (dim_shape.dims() > 1 || (dim_shape.dims() == 1 && dim_shape.dim_size(0) > 1)) {
    return errors::InvalidArgument("'dim' must be a tensor with a single value, got shape ", dim_shape.DebugString());
  }
  const PartialTensorShape& in = c->input(0);
  if (in.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  const Tensor* t = c->input_tensor(1);
  if (t == nullptr) {
    c->set_output(0, PartialTensorShape::UnknownOfRank(in.dims() + 1));
    return absl::OkStatus();
  }
  int64_t dim = 0;
  RETURN_IF_ERROR(ReadIndexScalar(*t, "dim", &dim, /*allow_one_element=*/true));
  int a = 0;
  RETURN_IF_ERROR(CanonicalAxis(dim, in.dims() + 1, "ExpandDims: dim", &a));
  std::vector<int64_t> dims(in.dim_sizes().begin(), in.dim_sizes().end());
  dims.insert(dims.begin() + a, 1);
  ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(dims));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

class ExpandDimsOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    int64_t dim = 0;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, ReadIndexScalar(ctx->input(1), "dim", &dim, true)));
    int a = 0;
    OP_REQUIRES(ctx, CanonicalAxis(dim, input.dims() + 1, "dim", &a).ok(),
                KernelError(*this, "Tried to expand dim index ", dim, " for tensor with ", input.dims(),
                            " dimensions (shape ", ShapeStr(input), ")"));
    DimVector dims(input.shape().dim_sizes().begin(), input.shape().dim_sizes().end());
    dims.insert(dims.begin() + a, 1);
    OP_REQUIRES_ASSIGN(ctx, TensorShape shape, MakeShape(*this, dims));
    OP_REQUIRES_ASSIGN(ctx, Tensor out, input.Reshaped(shape));
    ctx->set_output(0, std::move(out));
  }
};

// The dimensions Squeeze keeps; `dims` as listed in squeeze_dims (empty: every dimension of
// size 1). With unknown sizes: -1 where a listed dimension is unknown (it must be 1 at run
// time), and an error when none are listed (the rank of the result is unknown).
StatusOr<std::vector<int64_t>> SqueezedDims(absl::Span<const int64_t> shape, const std::vector<int64_t>& dims,
                                            bool* rank_unknown) {
  const int rank = static_cast<int>(shape.size());
  std::vector<char> drop(rank, 0);
  for (int64_t d : dims) {
    int a = 0;
    RETURN_IF_ERROR(CanonicalAxis(d, rank, "squeeze_dims", &a));
    if (shape[a] >= 0 && shape[a] != 1) {
      return errors::InvalidArgument("Can not squeeze dim[", a, "], expected a dimension of 1, got ", shape[a]);
    }
    drop[a] = 1;
  }
  *rank_unknown = false;
  std::vector<int64_t> out;
  for (int d = 0; d < rank; ++d) {
    if (dims.empty()) {
      if (shape[d] == -1) *rank_unknown = true;
      if (shape[d] == 1) continue;
    } else if (drop[d]) {
      continue;
    }
    out.push_back(shape[d]);
  }
  return out;
}

Status SqueezeShape(InferenceContext* c) {
  std::vector<int64_t> dims;
  RETURN_IF_ERROR(c->GetAttr("squeeze_dims", &dims));
  const PartialTensorShape& in = c->input(0);
  if (in.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  bool rank_unknown = false;
  ASSIGN_OR_RETURN(std::vector<int64_t> out, SqueezedDims(in.dim_sizes(), dims, &rank_unknown));
  if (rank_unknown) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(PartialTensorShape s, PartialTensorShape::FromDims(out));
  c->set_output(0, std::move(s));
  return absl::OkStatus();
}

class SqueezeOp : public OpKernel {
 public:
  explicit SqueezeOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("squeeze_dims", &dims_)); }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    bool rank_unknown = false;
    auto out_dims = SqueezedDims(input.shape().dim_sizes(), dims_, &rank_unknown);
    OP_REQUIRES(ctx, out_dims.ok(),
                KernelAnnotate(*this, errors::Annotate(out_dims.status(),
                                                       absl::StrCat("input shape ", ShapeStr(input), ": "))));
    OP_REQUIRES_ASSIGN(ctx, TensorShape shape, MakeShape(*this, *out_dims));
    OP_REQUIRES_ASSIGN(ctx, Tensor out, input.Reshaped(shape));
    ctx->set_output(0, std::move(out));
  }

 private:
  std::vector<int64_t> dims_;
};

// ---- gradients ----

Status TransposeGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  const NodeOut perm = c->inputs[1];
  NodeOut inverse;
  DimVector p;
  // A constant permutation of non-negative entries is inverted here; anything else by
  // InvertPermutation, which rejects negative entries when it runs (as TensorFlow's gradient does).
  if (const Tensor* t = ConstValue(perm); t != nullptr && ReadIndexVector(*t, "perm", &p).ok() &&
                                          std::all_of(p.begin(), p.end(), [](int64_t d) { return d >= 0; }) &&
                                          CheckPermutation(p, static_cast<int64_t>(p.size())).ok()) {
    std::vector<int64_t> inv(p.size());
    for (size_t i = 0; i < p.size(); ++i) inv[p[i]] = static_cast<int64_t>(i);
    inverse = IndexConst(b, ValueType(perm), inv, "inverse_perm");
  } else {
    inverse = b->Op("InvertPermutation", {perm});
  }
  c->grad_inputs[0] = b->Op("Transpose", {c->grad_outputs[0], inverse});
  return b->status();
}

// ExpandDims, Squeeze (and Reshape, in shape_ops.cc): the gradient reshaped to the input's shape.
Status ReshapeToInputGrad(GradContext* c) {
  c->grad_inputs[0] = c->b->Op("Reshape", {c->grad_outputs[0], ShapeOf(c->b, c->inputs[0], DT_INT32)});
  return c->b->status();
}

}  // namespace

void RegisterTransposeOps() {
  RegisterOp(OpDefBuilder("Transpose")
                 .Input("x: T")
                 .Input("perm: Tperm")
                 .Output("y: T")
                 .Attr("T: type")
                 .Attr("Tperm: {int32, int64} = int32")
                 .SetShapeFn(TransposeShape)
                 .Doc("Permutes the dimensions: output dimension i is input dimension perm[i]."));
  RegisterOp(OpDefBuilder("InvertPermutation")
                 .Input("x: T")
                 .Output("y: T")
                 .Attr("T: {int32, int64} = int32")
                 .SetShapeFn(InvertPermutationShape)
                 .Doc("The inverse permutation: y[x[i]] = i."));
  RegisterOp(OpDefBuilder("ExpandDims")
                 .Input("input: T")
                 .Input("dim: Tdim")
                 .Output("output: T")
                 .Attr("T: type")
                 .Attr("Tdim: {int32, int64} = int32")
                 .SetShapeFn(ExpandDimsShape)
                 .Doc("Inserts a dimension of size 1 at index `dim` (negative: from the end)."));
  RegisterOp(OpDefBuilder("Squeeze")
                 .Input("input: T")
                 .Output("output: T")
                 .Attr("T: type")
                 .Attr("squeeze_dims: list(int) >= 0 = []")
                 .SetShapeFn(SqueezeShape)
                 .Doc("Removes dimensions of size 1: those listed in squeeze_dims, or all of them."));
  RegisterKernel<TransposeOp>(KernelBuilder("Transpose"));
  RegisterKernel<InvertPermutationOp<int32_t>>(KernelBuilder("InvertPermutation").TypeConstraint<int32_t>("T"));
  RegisterKernel<InvertPermutationOp<int64_t>>(KernelBuilder("InvertPermutation").TypeConstraint<int64_t>("T"));
  RegisterKernel<ExpandDimsOp>(KernelBuilder("ExpandDims"));
  RegisterKernel<SqueezeOp>(KernelBuilder("Squeeze"));
  RegisterGradient("Transpose", TransposeGrad);
  RegisterNoGradient("InvertPermutation");
  RegisterGradient("ExpandDims", ReshapeToInputGrad);
  RegisterGradient("Squeeze", ReshapeToInputGrad);
}

}  // namespace dflow
