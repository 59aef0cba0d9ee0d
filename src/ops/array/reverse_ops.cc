// ReverseV2 (tf.reverse) and ReverseSequence (tf.reverse_sequence, used by
// bidirectional_dynamic_rnn) with TensorFlow's OpDefs and errors; each is its own gradient.
#include <vector>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/array/array_util.h"

namespace dflow {
namespace {

using namespace ::dflow::array;  // NOLINT: the family's own helpers

// out[index] = in[source(index)] where source maps a multi-index to the element it comes from.
template <typename Source>
Status CopyMapped(const OpKernel& k, const Tensor& in, Tensor* out, Source source) {
  const int rank = in.dims();
  const DimVector strides = Strides(in.shape());
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  const int64_t n = in.NumElements();
  bool ok = VisitStorage(in.dtype(), [&]<typename E>() {
    const E* src = StorageData<E>(in);
    E* dst = StorageData<E>(out);
    for (int64_t i = 0; i < n; ++i) {
      int64_t from = 0;
      for (int d = 0; d < rank; ++d) from += source(idx, d) * strides[d];
      dst[i] = src[from];
      for (int d = rank - 1; d >= 0; --d) {
        if (++idx[d] < in.dim_size(d)) break;
        idx[d] = 0;
      }
    }
  });
  if (!ok) return KernelError(k, "unsupported dtype ", DTypeString(in.dtype()));
  return absl::OkStatus();
}

class ReverseV2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    DimVector axes;
    OP_REQUIRES_OK(ctx, ReadIndexVector(ctx->input(1), "axis", &axes));
    std::vector<bool> rev(static_cast<size_t>(in.dims()), false);
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = axes[i] < 0 ? axes[i] + in.dims() : axes[i];
      OP_REQUIRES(ctx, a >= 0 && a < in.dims(),
                  errors::InvalidArgument("'axis'[", i, "] = ", axes[i], " is out of valid range [", 0, ", ",
                                          in.dims() - 1, "]."));
      OP_REQUIRES(ctx, !rev[a], errors::InvalidArgument("axis ", a, " specified more than once."));
      rev[a] = true;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    OP_REQUIRES_OK(ctx, CopyMapped(*this, in, out, [&](const std::vector<int64_t>& idx, int d) {
                     return rev[d] ? in.dim_size(d) - 1 - idx[d] : idx[d];
                   }));
  }
};

class ReverseSequenceOp : public OpKernel {
 public:
  explicit ReverseSequenceOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("seq_dim", &seq_dim_));
    if (c->status().ok()) c->SetStatus(c->GetAttr("batch_dim", &batch_dim_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const Tensor& lens_t = ctx->input(1);
    OP_REQUIRES(ctx, batch_dim_ != seq_dim_, errors::InvalidArgument("batch_dim == seq_dim == ", seq_dim_));
    OP_REQUIRES(ctx, seq_dim_ >= 0 && seq_dim_ < in.dims(),
                errors::InvalidArgument("seq_dim must be < input rank ( ", seq_dim_, " vs. ", in.dims(), ")"));
    OP_REQUIRES(ctx, batch_dim_ >= 0 && batch_dim_ < in.dims(),
                errors::InvalidArgument("batch_dim must be < input rank ( ", batch_dim_, " vs. ", in.dims(), ")"));
    OP_REQUIRES(ctx, lens_t.dims() == 1, errors::InvalidArgument("seq_lengths must be 1-dim, not ", lens_t.dims()));
    DimVector lens;
    OP_REQUIRES_OK(ctx, ReadIndexVector(lens_t, "seq_lengths", &lens));
    OP_REQUIRES(ctx, static_cast<int64_t>(lens.size()) == in.dim_size(batch_dim_),
                errors::InvalidArgument("Length of seq_lengths != input.dims(", batch_dim_, "), (", lens.size(),
                                        " vs. ", in.dim_size(batch_dim_), ")"));
    for (size_t i = 0; i < lens.size(); ++i) {
      OP_REQUIRES(ctx, lens[i] >= 0, errors::InvalidArgument("seq_lengths(", i, ") < 0"));
      OP_REQUIRES(ctx, lens[i] <= in.dim_size(seq_dim_),
                  errors::InvalidArgument("seq_lengths[", i, "] > input.dims(", seq_dim_, ")"));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    const int sd = static_cast<int>(seq_dim_), bd = static_cast<int>(batch_dim_);
    OP_REQUIRES_OK(ctx, CopyMapped(*this, in, out, [&](const std::vector<int64_t>& idx, int d) {
                     if (d != sd) return idx[d];
                     const int64_t len = lens[static_cast<size_t>(idx[bd])];
                     return idx[d] < len ? len - 1 - idx[d] : idx[d];
                   }));
  }

 private:
  int64_t seq_dim_ = 0;
  int64_t batch_dim_ = 0;
};

// TensorFlow's shape functions: constant axes checked while building; seq_lengths must match the
// batch dimension and seq_dim/batch_dim lie within the rank.
Status ReverseV2Shape(InferenceContext* c) {
  const PartialTensorShape& in = c->input(0);
  DimVector axes;
  ASSIGN_OR_RETURN(bool known, ConstIndexVector(c, 1, "axis", &axes));
  if (known && !in.unknown_rank()) {
    const int64_t rank = in.dims();
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
      if (a < 0 || a >= rank) {
        return errors::InvalidArgument("'axis'[", i, "] = ", axes[i], " is out of valid range [0, ", rank - 1, "]");
      }
      if (seen[a]) return errors::InvalidArgument("axis ", a, " specified more than once.");
      seen[a] = true;
    }
  }
  c->set_output(0, in);
  return absl::OkStatus();
}

Status ReverseSequenceShape(InferenceContext* c) {
  PartialTensorShape lens;
  RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &lens));
  int64_t seq_dim = 0, batch_dim = 0;
  RETURN_IF_ERROR(c->GetAttr("seq_dim", &seq_dim));
  RETURN_IF_ERROR(c->GetAttr("batch_dim", &batch_dim));
  const PartialTensorShape& in = c->input(0);
  if (in.unknown_rank()) {
    c->set_output(0, in);
    return absl::OkStatus();
  }
  if (batch_dim >= in.dims()) {
    return errors::InvalidArgument("batch_dim must be < input rank: ", batch_dim, " vs. ", in.dims());
  }
  if (seq_dim >= in.dims()) {
    return errors::InvalidArgument("seq_dim must be < input rank: ", seq_dim, " vs. ", in.dims());
  }
  std::vector<int64_t> dims(in.dim_sizes().begin(), in.dim_sizes().end());
  if (batch_dim >= 0) {
    const int64_t b = dims[batch_dim], n = lens.dim_size(0);
    if (b >= 0 && n >= 0 && b != n) {
      return errors::InvalidArgument("Dimensions must be equal, but are ", b, " and ", n);
    }
    if (b < 0) dims[batch_dim] = n;
  }
  ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(dims));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterReverseOps() {
  RegisterOp(OpDefBuilder("ReverseV2")
                 .Input("tensor: T")
                 .Input("axis: Tidx")
                 .Output("output: T")
                 .Attr("Tidx: {int32, int64} = DT_INT32")
                 .Attr("T: type")
                 .SetShapeFn(ReverseV2Shape)
                 .Doc("The tensor with the given axes reversed."));
  RegisterOp(OpDefBuilder("ReverseSequence")
                 .Input("input: T")
                 .Input("seq_lengths: Tlen")
                 .Output("output: T")
                 .Attr("seq_dim: int")
                 .Attr("batch_dim: int = 0")
                 .Attr("T: type")
                 .Attr("Tlen: {int32, int64} = DT_INT64")
                 .SetShapeFn(ReverseSequenceShape)
                 .Doc("Reverses the first seq_lengths[b] slices along seq_dim of each batch row b."));
  RegisterKernel<ReverseV2Op>(KernelBuilder("ReverseV2"));
  RegisterKernel<ReverseSequenceOp>(KernelBuilder("ReverseSequence"));
  RegisterGradient("ReverseV2", [](GradContext* c) {
    if (c->grad_outputs[0].node == nullptr) return absl::OkStatus();
    c->grad_inputs[0] = c->b->Op("ReverseV2", {c->grad_outputs[0], c->inputs[1]});
    return c->b->status();
  });
  RegisterGradient("ReverseSequence", [](GradContext* c) {
    if (c->grad_outputs[0].node == nullptr) return absl::OkStatus();
    int64_t seq_dim = 0, batch_dim = 0;
    RETURN_IF_ERROR(GetAttr(c->node->attrs(), "seq_dim", &seq_dim));
    RETURN_IF_ERROR(GetAttr(c->node->attrs(), "batch_dim", &batch_dim));
    c->grad_inputs[0] = c->b->Op("ReverseSequence", {c->grad_outputs[0], c->inputs[1]},
                                 {{"seq_dim", seq_dim}, {"batch_dim", batch_dim}});
    return c->b->status();
  });
}

}  // namespace dflow
