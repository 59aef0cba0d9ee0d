// Gradient functions of Sum, Mean, Max, Min and Prod; ArgMax and ArgMin have none.
//
// The gradient of a reduction is broadcast back over the reduced axes: reshaped to the
// keep_dims shape and multiplied by ones of x's shape (no Tile or BroadcastTo needed).
#include "ops/math/grad_util.h"
#include "ops/math/math_ops.h"

namespace dflow {
namespace {

using namespace math_grad;  // NOLINT: the helpers of this family's gradients

NodeOut Scalar(GradContext* c, double v) { return c->b->Scalar(ValueType(c->inputs[0]), v); }

// g reshaped to the keep_dims shape of the reduction, so that it broadcasts against x.
NodeOut KeptGrad(GradContext* c) {
  return c->b->Op("Reshape", {c->grad_outputs[0], KeptDimsShape(c->b, c->inputs[0], c->inputs[1])});
}

// g broadcast back to x's shape.
NodeOut SumGrad(GradContext* c) { return c->b->Op("Mul", {KeptGrad(c), ConstantLike(c->b, c->inputs[0], 1)}); }

// The number of input elements behind each output element.
NodeOut MeanCount(GradContext* c) {
  GraphBuilder* b = c->b;
  const PartialTensorShape& xs = StaticShape(c->inputs[0]);
  const PartialTensorShape& ys = c->node->output_shape(0);
  if (xs.IsFullyDefined() && ys.IsFullyDefined()) {
    return Scalar(c, static_cast<double>(xs.num_elements()) / std::max<int64_t>(ys.num_elements(), 1));
  }
  const DType t = ValueType(c->inputs[0]);
  NodeOut in_size = b->Op("Size", {c->inputs[0]}, {{"out_type", DT_INT32}});
  NodeOut out_size = b->Op("Size", {c->outputs[0]}, {{"out_type", DT_INT32}});
  out_size = b->Op("Maximum", {out_size, b->Scalar(DT_INT32, 1)});
  return b->Op("Div", {b->Op("Cast", {in_size}, {{"DstT", t}}), b->Op("Cast", {out_size}, {{"DstT", t}})});
}

// Max and Min: the gradient goes to the elements equal to the result, split evenly among ties.
Status ExtremumGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  const NodeOut& x = c->inputs[0];
  const NodeOut& axes = c->inputs[1];
  NodeOut kept = KeptDimsShape(b, x, axes);
  NodeOut y = b->Op("Reshape", {c->outputs[0], kept});
  NodeOut g = b->Op("Reshape", {c->grad_outputs[0], kept});
  NodeOut hits = b->Op("Cast", {b->Op("Equal", {y, x})}, {{"DstT", ValueType(x)}});
  NodeOut ties = b->Op("Sum", {hits, axes}, {{"keep_dims", true}});
  c->grad_inputs[0] = b->Op("Mul", {b->Op("Div", {hits, ties}), g});
  return absl::OkStatus();
}

// d prod / d x_i is the product of the other elements. With no zero in the slice that is
// prod / x_i; with exactly one zero only the zero's position has a gradient (the product of the
// others); with two or more zeros every gradient is 0. The products skip zeros (replaced by 1),
// so no division by zero happens.
Status ProdGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  const NodeOut& x = c->inputs[0];
  const NodeOut& axes = c->inputs[1];
  const DType t = ValueType(x);
  NodeOut is_zero = b->Op("Equal", {x, Scalar(c, 0)});
  NodeOut nonzero = b->Op("SelectV2", {is_zero, Scalar(c, 1), x});
  NodeOut prod = b->Op("Prod", {nonzero, axes}, {{"keep_dims", true}});
  NodeOut zeros = b->Op("Sum", {b->Op("Cast", {is_zero}, {{"DstT", t}}), axes}, {{"keep_dims", true}});
  NodeOut others = b->Op("Div", {prod, nonzero});
  NodeOut keep = b->Op("SelectV2",
                       {is_zero, b->Op("Equal", {zeros, Scalar(c, 1)}), b->Op("Equal", {zeros, Scalar(c, 0)})});
  NodeOut factor = b->Op("Mul", {others, b->Op("Cast", {keep}, {{"DstT", t}})});
  c->grad_inputs[0] = b->Op("Mul", {KeptGrad(c), factor});
  return absl::OkStatus();
}

template <typename Fn>
GradFn IfGradient(Fn fn) {
  return [fn](GradContext* c) -> Status {
    if (c->grad_outputs[0].node == nullptr) return absl::OkStatus();
    return fn(c);
  };
}

}  // namespace

void RegisterReductionGradients() {
  RegisterGradient("Sum", IfGradient([](GradContext* c) {
                     c->grad_inputs[0] = SumGrad(c);
                     return absl::OkStatus();
                   }));
  RegisterGradient("Mean", IfGradient([](GradContext* c) {
                     c->grad_inputs[0] = c->b->Op("Div", {SumGrad(c), MeanCount(c)});
                     return absl::OkStatus();
                   }));
  RegisterGradient("Max", IfGradient(ExtremumGrad));
  RegisterGradient("Min", IfGradient(ExtremumGrad));
  RegisterGradient("Prod", IfGradient(ProdGrad));
  RegisterNoGradient("ArgMax");
  RegisterNoGradient("ArgMin");
}

}  // namespace dflow
