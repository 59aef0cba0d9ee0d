// ArgMax, ArgMin: the index of the largest / smallest element along one axis. Ties give the
// first index. NaN is passed over, as by TensorFlow's kernels: the scan starts from index 0 with
// the type's lowest (ArgMax) or highest (ArgMin) value and moves to an element only when it
// compares strictly better (so [NaN, 1, 2] gives 2, and all-NaN gives 0).
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "ops/math/math_ops.h"

namespace dflow {
namespace {

// Reads the axis from a scalar (or one-element vector) int32/int64 tensor.
Status ReadAxis(const Tensor& t, int rank, int* axis) {
  if (t.NumElements() != 1 || t.dims() > 1) {
    return errors::InvalidArgument("dimension must be a scalar, got shape ", t.shape().DebugString());
  }
  const int64_t a = t.dtype() == DT_INT32 ? t.data<int32_t>()[0] : t.data<int64_t>()[0];
  if (a < -rank || a >= rank) {
    return errors::InvalidArgument("Expected dimension in the range [", -rank, ", ", rank, "), but got ", a);
  }
  *axis = static_cast<int>(a < 0 ? a + rank : a);
  return absl::OkStatus();
}

Status ArgMinMaxShape(InferenceContext* c) {
  const PartialTensorShape& in = c->input(0);
  if (c->input(1).dims() > 1) {
    return errors::InvalidArgument("dimension must be a scalar, got ", c->input(1).DebugString());
  }
  if (in.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  if (in.dims() == 0) return errors::InvalidArgument("Cannot take an arg max/min of a scalar");
  const Tensor* dim = c->input_tensor(1);
  if (dim == nullptr) {
    c->set_output(0, PartialTensorShape::UnknownOfRank(in.dims() - 1));
    return absl::OkStatus();
  }
  int axis = 0;
  RETURN_IF_ERROR(ReadAxis(*dim, in.dims(), &axis));
  // An empty reduced dimension is the kernel's to reject (as in TensorFlow).
  std::vector<int64_t> dims;
  for (int i = 0; i < in.dims(); ++i)
    if (i != axis) dims.push_back(in.dim_size(i));
  ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(dims));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

// True when v should replace `best` (strictly better; the first of equals stays; NaN never is).
template <typename T, bool kMax>
inline bool Better(T v, T best) {
  return kMax ? v > best : v < best;
}

template <typename T, typename Index, bool kMax>
class ArgOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    int axis = 0;
    Status s = x.dims() == 0 ? errors::InvalidArgument("the input must have rank >= 1, got a scalar")
                             : ReadAxis(ctx->input(1), x.dims(), &axis);
    OP_REQUIRES(ctx, s.ok(), errors::Annotate(s, absl::StrCat(type_string(), " '", name(), "': ")));
    const int64_t n = x.dim_size(axis);
    OP_REQUIRES(ctx, n > 0,
                errors::InvalidArgument(type_string(), " '", name(), "': Reduction axis ", axis, " is empty in shape ",
                                        x.shape().DebugString()));
    OP_REQUIRES(ctx, n - 1 <= static_cast<int64_t>(std::numeric_limits<Index>::max()),
                errors::InvalidArgument(type_string(), " '", name(), "': axis ", axis, " has ", n,
                                        " elements, more than output_type int32 can index"));
    TensorShape out_shape;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < x.dims(); ++i) {
      if (i < axis) outer *= x.dim_size(i);
      if (i > axis) inner *= x.dim_size(i);
      if (i != axis) out_shape.AddDimUnchecked(x.dim_size(i));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return;
    const T* xd = x.data<T>();
    Index* o = out->data<Index>();
    std::vector<T> best(static_cast<size_t>(inner));
    for (int64_t r = 0; r < outer; ++r) {
      const T* base = xd + r * n * inner;
      Index* orow = o + r * inner;
      for (int64_t j = 0; j < inner; ++j) {
        best[j] = kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
        orow[j] = 0;
      }
      for (int64_t k = 0; k < n; ++k) {
        const T* row = base + k * inner;
        for (int64_t j = 0; j < inner; ++j) {
          if (Better<T, kMax>(row[j], best[j])) {
            best[j] = row[j];
            orow[j] = static_cast<Index>(k);
          }
        }
      }
    }
  }
};

template <bool kMax, typename... Ts>
void RegisterArgKernels(const char* op) {
  (RegisterKernel<ArgOp<Ts, int64_t, kMax>>(KernelBuilder(op).TypeConstraint<Ts>("T").TypeConstraint("output_type",
                                                                                                     DT_INT64)),
   ...);
  (RegisterKernel<ArgOp<Ts, int32_t, kMax>>(KernelBuilder(op).TypeConstraint<Ts>("T").TypeConstraint("output_type",
                                                                                                     DT_INT32)),
   ...);
}

}  // namespace

void RegisterArgMinMaxOps() {
  for (const char* name : {"ArgMax", "ArgMin"}) {
    RegisterOp(OpDefBuilder(name)
                   .Input("input: T")
                   .Input("dimension: Tidx")
                   .Output("output: output_type")
                   .Attr("T: {float, double, int32, int64, uint8}")
                   .Attr("Tidx: {int32, int64} = DT_INT32")
                   .Attr("output_type: {int32, int64} = DT_INT64")
                   .SetShapeFn(ArgMinMaxShape)
                   .Doc(absl::StrCat("The index of the ", name == std::string("ArgMax") ? "largest" : "smallest",
                                     " element along `dimension` (the first of ties).")));
  }
  RegisterArgKernels<true, float, double, int32_t, int64_t, uint8_t>("ArgMax");
  RegisterArgKernels<false, float, double, int32_t, int64_t, uint8_t>("ArgMin");
}

}  // namespace dflow
