// RandomShuffle: a uniformly random permutation of the first dimension (Fisher-Yates over the
// rows, then one copy of each row). Stateful: see GuardedPhilox.
#include <numeric>
#include <vector>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/array/array_util.h"
#include "ops/random/guarded_philox.h"
#include "ops/random/sampling_ops.h"

namespace dflow {
namespace {

class RandomShuffleOp : public OpKernel {
 public:
  explicit RandomShuffleOp(OpKernelConstruction* c) : OpKernel(c) { gen_.Init(c); }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    if (input.dims() == 0 || input.dim_size(0) <= 1) {
      ctx->set_output(0, input);
      return;
    }
    const int64_t n = input.dim_size(0);
    RandomBits bits = gen_.Reserve(GuardedPhilox::BlocksFor64BitDraws(n));
    std::vector<int64_t> perm(n);
    std::iota(perm.begin(), perm.end(), int64_t{0});
    for (int64_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[UniformInt<int64_t>(&bits, 0, i + 1)]);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input.shape(), &out));
    const int64_t row = input.NumElements() / n;
    const bool ok = array::VisitStorage(input.dtype(), [&]<typename E>() {
      const E* src = array::StorageData<E>(input);
      E* dst = array::StorageData<E>(out);
      for (int64_t i = 0; i < n; ++i) array::CopyN(src + perm[i] * row, row, dst + i * row);
    });
    OP_REQUIRES(ctx, ok, array::KernelError(*this, "unsupported type ", DTypeString(input.dtype())));
  }

 private:
  GuardedPhilox gen_;
};

}  // namespace

void RegisterRandomShuffleOp() {
  RegisterOp(OpDefBuilder("RandomShuffle")
                 .Input("value: T")
                 .Output("output: T")
                 .Attr("seed: int = 0")
                 .Attr("seed2: int = 0")
                 .Attr("T: type")
                 .SetIsStateful()
                 .SetShapeFn(UnchangedShape)
                 .Doc("The value with its first dimension randomly permuted."));
  RegisterKernel<RandomShuffleOp>(KernelBuilder("RandomShuffle"));
  RegisterNoGradient("RandomShuffle");
}

}  // namespace dflow
