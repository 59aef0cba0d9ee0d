// The gradients of FusedBatchNormGrad, FusedBatchNormGradV2 and FusedBatchNormGradV3 (second
// derivatives of batch norm), as TensorFlow's _FusedBatchNormGradGrad: the gradient kernel's
// arithmetic is rebuilt from elementary ops (TensorFlow's _BatchNormGrad: in training it
// recomputes the batch statistics from x, the mean held constant inside the variance) and
// differentiated with respect to y_backprop, x and scale; reserve spaces get none.
#include "framework/attr_value.h"
#include "graph/gradients.h"
#include "ops/nn/nn_grad_util.h"

namespace dflow {
namespace {

NodeOut IntVector(GraphBuilder* b, const std::vector<int32_t>& v) {
  Tensor t(DT_INT32, TensorShape({int64_t(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) t.data<int32_t>()[i] = v[i];
  return b->Const(t);
}

Status FusedBatchNormGradGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  float epsilon = 1e-4f;
  std::string format = "NHWC";
  bool training = true;
  RETURN_IF_ERROR(GetAttr(c->node->attrs(), "epsilon", &epsilon));
  RETURN_IF_ERROR(GetAttr(c->node->attrs(), "data_format", &format));
  RETURN_IF_ERROR(GetAttr(c->node->attrs(), "is_training", &training));
  const bool five = format == "NDHWC" || format == "NCDHW";
  const bool channels_first = format == "NCHW" || format == "NCDHW";
  std::vector<int32_t> axes;
  if (channels_first) {
    axes = five ? std::vector<int32_t>{0, 2, 3, 4} : std::vector<int32_t>{0, 2, 3};
  } else {
    axes = five ? std::vector<int32_t>{0, 1, 2, 3} : std::vector<int32_t>{0, 1, 2};
  }
  const NodeOut ax = IntVector(b, axes);
  // Per-channel vectors broadcast against x: [1, C, 1, 1(, 1)] for channels-first data.
  std::vector<int32_t> bshape = five ? std::vector<int32_t>{1, -1, 1, 1, 1} : std::vector<int32_t>{1, -1, 1, 1};
  auto per_channel = [&](const NodeOut& v) { return channels_first ? b->Op("Reshape", {v, IntVector(b, bshape)}) : v; };
  const AttrMap keep{{"keep_dims", channels_first}};
  const AttrMap drop{{"keep_dims", false}};

  const NodeOut gy = c->inputs[0], x = c->inputs[1];
  const NodeOut scale = per_channel(c->inputs[2]);
  const NodeOut eps = b->Scalar(DT_FLOAT, epsilon);
  NodeOut gx, gs, go;
  if (training) {
    NodeOut mean_gy = b->Op("Mean", {gy, ax}, keep);
    NodeOut mean_x = b->Op("Mean", {x, ax}, keep);
    NodeOut var_x = b->Op("Mean", {b->Op("SquaredDifference", {x, b->Op("StopGradient", {mean_x})}), ax}, keep);
    NodeOut gy_off = b->Op("Sub", {gy, mean_gy});
    NodeOut x_off = b->Op("Sub", {x, mean_x});
    NodeOut gy_x = b->Op("Mul", {gy, x_off});
    NodeOut mean = b->Op("Mean", {gy_x, ax}, keep);
    NodeOut ve = b->Op("AddV2", {var_x, eps});
    NodeOut rs = b->Op("Rsqrt", {ve});
    gx = b->Op("Mul", {b->Op("Mul", {scale, rs}),
                       b->Op("Sub", {gy_off, b->Op("Mul", {b->Op("Mul", {b->Op("Reciprocal", {ve}), mean}), x_off})})});
    gs = b->Op("Mul", {rs, b->Op("Sum", {gy_x, ax}, keep)});
    if (channels_first) gs = b->Op("Reshape", {gs, IntVector(b, {-1})});
    go = b->Op("Sum", {gy, ax}, drop);
  } else {
    NodeOut mean = per_channel(c->inputs[3]);
    NodeOut rs = b->Op("Rsqrt", {b->Op("AddV2", {per_channel(c->inputs[4]), eps})});
    go = b->Op("Sum", {gy, ax}, drop);
    gs = b->Op("Sum", {b->Op("Mul", {b->Op("Mul", {gy, b->Op("Sub", {x, mean})}), rs}), ax}, drop);
    gx = b->Op("Mul", {b->Op("Mul", {gy, scale}), rs});
  }
  RETURN_IF_ERROR(b->status());
  std::string prefix = b->prefix();
  if (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  ASSIGN_OR_RETURN(std::vector<NodeOut> grads,
                   AddGradients(b->graph(), {gx, gs, go}, {gy, x, c->inputs[2]},
                                {c->GradOrZeros(0), c->GradOrZeros(1), c->GradOrZeros(2)}, prefix + "/BatchNormGrad"));
  c->grad_inputs[0] = grads[0];
  c->grad_inputs[1] = grads[1];
  c->grad_inputs[2] = grads[2];
  return absl::OkStatus();
}

}  // namespace

void RegisterBatchNormGradGradients() {
  for (const char* op : {"FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"}) {
    RegisterGradient(op, FusedBatchNormGradGrad);
  }
}

}  // namespace dflow
