// Unique: the distinct values of a 1-D tensor in order of first appearance, and for each element
// the index of its value among them (the optimizers' sparse updates sum repeated indices with it).
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/array/array_ops.h"

namespace dflow {
namespace {

template <typename T, typename Idx>
class UniqueOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    OP_REQUIRES(ctx, x.dims() == 1,
                errors::InvalidArgument("Unique '", name(), "': unique expects a 1D vector, got shape ",
                                        x.shape().DebugString()));
    const int64_t n = x.NumElements();
    if constexpr (std::is_same_v<Idx, int32_t>) {
      OP_REQUIRES(ctx, n <= std::numeric_limits<int32_t>::max(),
                  errors::InvalidArgument("Unique '", name(), "': ", n, " elements do not fit out_idx int32"));
    }
    Tensor* idx = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, x.shape(), &idx));
    const T* xd = x.data<T>();
    Idx* id = idx->data<Idx>();
    // Equal values (0.0 and -0.0 among them) share an entry; NaN equals nothing, so each NaN is
    // a value of its own, as in TensorFlow.
    std::unordered_map<T, Idx> first;
    std::vector<int64_t> order;
    for (int64_t i = 0; i < n; ++i) {
      auto [it, added] = first.try_emplace(xd[i], static_cast<Idx>(order.size()));
      if (added) order.push_back(i);
      id[i] = it->second;
    }
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape{static_cast<int64_t>(order.size())}, &y));
    T* yd = y->data<T>();
    for (size_t k = 0; k < order.size(); ++k) yd[k] = xd[order[k]];
  }
};

Status UniqueShape(InferenceContext* c) {
  PartialTensorShape x;
  RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &x));
  c->set_output(0, PartialTensorShape{-1});
  c->set_output(1, x);
  return absl::OkStatus();
}

template <typename T>
void RegisterUniqueKernels() {
  RegisterKernel<UniqueOp<T, int32_t>>(
      KernelBuilder("Unique").template TypeConstraint<T>("T").template TypeConstraint<int32_t>("out_idx"));
  RegisterKernel<UniqueOp<T, int64_t>>(
      KernelBuilder("Unique").template TypeConstraint<T>("T").template TypeConstraint<int64_t>("out_idx"));
}

}  // namespace

void RegisterUniqueOp() {
  RegisterOp(OpDefBuilder("Unique")
                 .Input("x: T")
                 .Output("y: T")
                 .Output("idx: out_idx")
                 .Attr("T: type")
                 .Attr("out_idx: {int32, int64} = int32")
                 .SetShapeFn(UniqueShape)
                 .Doc("The distinct values of 1-D x in order of first appearance (y), and the index into y of "
                      "each element of x (idx)."));
  RegisterUniqueKernels<float>();
  RegisterUniqueKernels<double>();
  RegisterUniqueKernels<int32_t>();
  RegisterUniqueKernels<int64_t>();
  RegisterUniqueKernels<uint8_t>();
  RegisterUniqueKernels<bool>();
  RegisterUniqueKernels<std::string>();
  // TensorFlow registers no gradient for Unique: a path through it to a loss is an error there too.
}

}  // namespace dflow
