// Multinomial: num_samples class indices per row of logits, drawn with probabilities
// softmax(logits[row]). Each row's cumulative distribution is built in double precision
// (relative to the row's largest logit, so large logits cannot overflow) and each sample is a
// binary search for a uniform draw. Stateful: see GuardedPhilox.
#include <algorithm>
#include <cmath>
#include <vector>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/array/array_util.h"
#include "ops/random/guarded_philox.h"
#include "ops/random/sampling_ops.h"

namespace dflow {
namespace {

Status MultinomialShape(InferenceContext* c) {
  PartialTensorShape logits, scalar;
  RETURN_IF_ERROR(c->WithRank(c->input(0), 2, &logits));
  RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &scalar));
  int64_t num_samples = -1;
  if (const Tensor* t = c->input_tensor(1)) {
    num_samples = t->scalar<int32_t>();
    if (num_samples < 0) return errors::InvalidArgument("num_samples should be nonnegative, got ", num_samples);
  }
  c->set_output(0, PartialTensorShape{logits.dim_size(0), num_samples});
  return absl::OkStatus();
}

template <typename T, typename OutT>
class MultinomialOp : public OpKernel {
 public:
  explicit MultinomialOp(OpKernelConstruction* c) : OpKernel(c) { gen_.Init(c); }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    const Tensor& num_t = ctx->input(1);
    OP_REQUIRES(ctx, logits.dims() == 2,
                array::KernelError(*this, "logits should be a matrix, got shape ", logits.shape().DebugString()));
    OP_REQUIRES(ctx, num_t.dims() == 0,
                array::KernelError(*this, "num_samples should be a scalar, got shape ", num_t.shape().DebugString()));
    const int64_t batch = logits.dim_size(0), classes = logits.dim_size(1);
    const int64_t num_samples = num_t.scalar<int32_t>();
    OP_REQUIRES(ctx, num_samples >= 0,
                array::KernelError(*this, "num_samples should be nonnegative, got ", num_samples));
    OP_REQUIRES(ctx, classes > 0 || batch == 0 || num_samples == 0,
                array::KernelError(*this, "num_classes should be positive, got logits of shape ",
                                   logits.shape().DebugString()));
    OP_REQUIRES_ASSIGN(ctx, TensorShape out_shape, TensorShape::FromDims({batch, num_samples}));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return;
    RandomBits bits = gen_.Reserve(GuardedPhilox::BlocksFor64BitDraws(out->NumElements()));
    OutT* o = out->data<OutT>();
    const T* l = logits.data<T>();
    std::vector<double> cdf(classes);
    for (int64_t r = 0; r < batch; ++r) {
      const T* row = l + r * classes;
      double max_logit = -INFINITY;
      for (int64_t k = 0; k < classes; ++k) {
        OP_REQUIRES(ctx, !std::isnan(row[k]) && row[k] != INFINITY,
                    array::KernelError(*this, "logits[", r, ", ", k, "] = ", row[k], " is not a number or -inf"));
        max_logit = std::max<double>(max_logit, row[k]);
      }
      OP_REQUIRES(ctx, max_logit > -INFINITY,
                  array::KernelError(*this, "every logit of row ", r, " is -inf: no class can be drawn"));
      double total = 0;
      for (int64_t k = 0; k < classes; ++k) {
        total += std::exp(static_cast<double>(row[k]) - max_logit);
        cdf[k] = total;
      }
      for (int64_t s = 0; s < num_samples; ++s) {
        const double u = UniformUnit<double>(&bits) * total;
        // The first class whose cumulative weight exceeds u; classes of weight 0 are never hit.
        const int64_t k = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
        o[r * num_samples + s] = static_cast<OutT>(std::min(k, classes - 1));
      }
    }
  }

 private:
  GuardedPhilox gen_;
};

template <typename T>
void RegisterMultinomialKernels() {
  RegisterKernel<MultinomialOp<T, int32_t>>(
      KernelBuilder("Multinomial").TypeConstraint("T", DTypeOf<T>::value).TypeConstraint("output_dtype", DT_INT32));
  RegisterKernel<MultinomialOp<T, int64_t>>(
      KernelBuilder("Multinomial").TypeConstraint("T", DTypeOf<T>::value).TypeConstraint("output_dtype", DT_INT64));
}

}  // namespace

void RegisterMultinomialOp() {
  RegisterOp(OpDefBuilder("Multinomial")
                 .Input("logits: T")
                 .Input("num_samples: int32")
                 .Output("output: output_dtype")
                 .Attr("seed: int = 0")
                 .Attr("seed2: int = 0")
                 .Attr("T: {float, double}")
                 .Attr("output_dtype: {int32, int64} = int64")
                 .SetIsStateful()
                 .SetShapeFn(MultinomialShape)
                 .Doc("Draws num_samples classes per row of logits [batch, num_classes] with probabilities "
                      "softmax(logits)."));
  RegisterMultinomialKernels<float>();
  RegisterMultinomialKernels<double>();
  RegisterNoGradient("Multinomial");
}

}  // namespace dflow
