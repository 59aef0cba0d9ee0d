// SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits and L2Loss, and their
// gradients.
#include <cmath>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/nn/nn_grad_util.h"
#include "ops/nn/nn_ops.h"
#include "ops/nn/softmax_rows.h"

namespace dflow {
namespace {

// The size of one dimension of two 2-D shapes broadcast against each other (equal, or one is 1);
// -1 when they do not broadcast (a negative size is unknown, for the shape function).
int64_t BroadcastDim(int64_t a, int64_t b) {
  if (a == b || b == 1) return a;
  if (a == 1) return b;
  if (a < 0 || b < 0) return a < 0 && b < 0 ? -1 : std::max(a, b) > 1 ? std::max(a, b) : -1;
  return -2;
}

// t [r, c] (r and c each 1 or rows/cols) repeated to [rows, cols].
template <typename T>
Tensor Broadcast2D(const Tensor& t, int64_t rows, int64_t cols) {
  if (t.dim_size(0) == rows && t.dim_size(1) == cols) return t;
  Tensor out(DTypeOf<T>::value, TensorShape{rows, cols});
  const int64_t tr = t.dim_size(0), tc = t.dim_size(1);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; ++j)
      out.data<T>()[r * cols + j] = t.data<T>()[(tr == 1 ? 0 : r) * tc + (tc == 1 ? 0 : j)];
  }
  return out;
}

// features, labels: [batch, classes] -> loss [batch], backprop = softmax(features) - labels.
// As in TensorFlow, features and labels broadcast against each other ([1, n] labels for every row).
template <typename T>
class SoftmaxXentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& features_in = ctx->input(0);
    const Tensor& labels_in = ctx->input(1);
    const bool two_d = features_in.dims() == 2 && labels_in.dims() == 2;
    const int64_t batch = two_d ? BroadcastDim(features_in.dim_size(0), labels_in.dim_size(0)) : -2;
    const int64_t depth = two_d ? BroadcastDim(features_in.dim_size(1), labels_in.dim_size(1)) : -2;
    OP_REQUIRES(ctx, batch >= 0 && depth >= 0,
                errors::InvalidArgument(type_string(), " '", name(),
                                        "': logits and labels must be 2-D [batch_size, num_classes] and broadcastable, "
                                        "got ",
                                        features_in.shape().DebugString(), " and ", labels_in.shape().DebugString()));
    const Tensor features = Broadcast2D<T>(features_in, batch, depth);
    const Tensor labels = Broadcast2D<T>(labels_in, batch, depth);
    Tensor *loss = nullptr, *backprop = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape{batch}, &loss));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape{batch, depth}, &backprop));
    for (int64_t r = 0; r < batch; ++r) {
      const T* f = features.data<T>() + r * depth;
      const T* l = labels.data<T>() + r * depth;
      T* bp = backprop->data<T>() + r * depth;
      const double lse = LogSumExp(f, depth);
      double sum = 0;
      for (int64_t j = 0; j < depth; ++j) {
        sum += double(l[j]) * (lse - double(f[j]));
        bp[j] = static_cast<T>(std::exp(double(f[j]) - lse) - double(l[j]));
      }
      loss->data<T>()[r] = static_cast<T>(sum);
    }
  }
};

// features [batch, classes], labels [batch] of class indices.
template <typename T, typename Index>
class SparseSoftmaxXentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& features = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    OP_REQUIRES(ctx, features.dims() == 2 && labels.dims() == 1 && labels.dim_size(0) == features.dim_size(0),
                errors::InvalidArgument(type_string(), " '", name(),
                                        "': logits must be 2-D [batch_size, num_classes] and labels 1-D [batch_size], "
                                        "got ",
                                        features.shape().DebugString(), " and ", labels.shape().DebugString()));
    const int64_t batch = features.dim_size(0), depth = features.dim_size(1);
    const Index* lab = labels.data<Index>();
    for (int64_t r = 0; r < batch; ++r) {
      OP_REQUIRES(ctx, lab[r] >= 0 && static_cast<int64_t>(lab[r]) < depth,
                  errors::InvalidArgument(type_string(), " '", name(), "': Received a label value of ",
                                          static_cast<int64_t>(lab[r]), " (at index ", r,
                                          ") which is outside the valid range of [0, ", depth, ")"));
    }
    Tensor *loss = nullptr, *backprop = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape{batch}, &loss));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, features.shape(), &backprop));
    for (int64_t r = 0; r < batch; ++r) {
      const T* f = features.data<T>() + r * depth;
      T* bp = backprop->data<T>() + r * depth;
      const double lse = SoftmaxRowAndLogSumExp(f, depth, bp);
      bp[lab[r]] = static_cast<T>(double(bp[lab[r]]) - 1.0);
      loss->data<T>()[r] = static_cast<T>(lse - double(f[lab[r]]));
    }
  }
};

template <typename T>
class L2LossOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    double sum = 0;
    for (T v : t.flat<T>()) sum += double(v) * double(v);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape{}, &out));
    out->scalar<T>() = static_cast<T>(sum / 2);
  }
};

Status XentShape(InferenceContext* c) {
  PartialTensorShape f, l;
  Status s = c->WithRank(c->input(0), 2, &f);
  if (s.ok()) s = c->WithRank(c->input(1), 2, &l);
  const int64_t batch = s.ok() ? BroadcastDim(f.dim_size(0), l.dim_size(0)) : -2;
  const int64_t depth = s.ok() ? BroadcastDim(f.dim_size(1), l.dim_size(1)) : -2;
  if (batch < -1 || depth < -1) {
    return errors::InvalidArgument("logits and labels must be 2-D [batch_size, num_classes] and broadcastable, got ",
                                   c->input(0).DebugString(), " and ", c->input(1).DebugString());
  }
  c->set_output(0, PartialTensorShape{batch});
  c->set_output(1, PartialTensorShape{batch, depth});
  return absl::OkStatus();
}

Status SparseXentShape(InferenceContext* c) {
  PartialTensorShape f, l;
  Status s = c->WithRank(c->input(0), 2, &f);
  if (s.ok()) s = c->WithRank(c->input(1), 1, &l);
  StatusOr<PartialTensorShape> batch = PartialTensorShape{-1};
  if (s.ok()) batch = PartialTensorShape{f.dim_size(0)}.MergeWith(l);
  if (!s.ok() || !batch.ok()) {
    return errors::InvalidArgument("logits must be 2-D [batch_size, num_classes] and labels 1-D [batch_size], got ",
                                   c->input(0).DebugString(), " and ", c->input(1).DebugString());
  }
  c->set_output(0, *batch);
  c->set_output(1, PartialTensorShape{batch->dim_size(0), f.dim_size(1)});
  return absl::OkStatus();
}

// The incoming per-example loss gradient as a column [batch, 1], to scale rows.
NodeOut Column(GraphBuilder* b, const NodeOut& g) {
  Tensor shape(DT_INT32, TensorShape{2});
  shape.data<int32_t>()[0] = -1;
  shape.data<int32_t>()[1] = 1;
  return b->Op("Reshape", {g, b->Const(shape, "column_shape")});
}

NodeOut AddOrFirst(GraphBuilder* b, const NodeOut& a, const NodeOut& c) {
  if (a.node == nullptr) return c;
  return b->Op("AddV2", {a, c});
}

// d loss / d features = backprop * g_loss; d loss / d labels = -log_softmax(features) * g_loss.
// A gradient flowing into backprop (= softmax(features) - labels) adds the softmax Jacobian
// applied to it for features, and its negation for labels.
Status SoftmaxXentGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  const NodeOut& features = c->inputs[0];
  const NodeOut& labels = c->inputs[1];
  const NodeOut& backprop = c->outputs[1];
  NodeOut df, dl;
  if (c->grad_outputs[0].node != nullptr) {
    NodeOut g = Column(b, c->grad_outputs[0]);
    df = b->Op("Mul", {g, backprop});
    dl = b->Op("Mul", {g, b->Op("Neg", {b->Op("LogSoftmax", {features})})});
  }
  if (c->grad_outputs[1].node != nullptr) {
    const NodeOut& gb = c->grad_outputs[1];
    NodeOut softmax = b->Op("AddV2", {backprop, labels});
    df = AddOrFirst(b, df, SoftmaxGradient(b, gb, softmax));
    dl = AddOrFirst(b, dl, b->Op("Neg", {gb}));
  }
  c->grad_inputs[0] = df.node != nullptr ? df : ZerosLike(b, features);
  c->grad_inputs[1] = dl.node != nullptr ? dl : ZerosLike(b, labels);
  return b->status();
}

// Labels are indices: no gradient. A gradient flowing into backprop (= softmax(features) -
// one_hot(labels)) adds the softmax Jacobian applied to it.
Status SparseSoftmaxXentGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  const NodeOut& features = c->inputs[0];
  NodeOut df;
  if (c->grad_outputs[0].node != nullptr) df = b->Op("Mul", {Column(b, c->grad_outputs[0]), c->outputs[1]});
  if (c->grad_outputs[1].node != nullptr) {
    df = AddOrFirst(b, df, SoftmaxGradient(b, c->grad_outputs[1], b->Op("Softmax", {features})));
  }
  c->grad_inputs[0] = df.node != nullptr ? df : ZerosLike(b, features);
  return b->status();
}

}  // namespace

void RegisterLossOps() {
  RegisterOp(OpDefBuilder("SoftmaxCrossEntropyWithLogits")
                 .Input("features: T")
                 .Input("labels: T")
                 .Output("loss: T")
                 .Output("backprop: T")
                 .Attr("T: {float, double}")
                 .SetShapeFn(XentShape)
                 .Doc("Per-example cross entropy of softmax(features) against label distributions, and its "
                      "gradient softmax(features) - labels."));
  RegisterKernel<SoftmaxXentOp<float>>(KernelBuilder("SoftmaxCrossEntropyWithLogits").TypeConstraint<float>("T"));
  RegisterKernel<SoftmaxXentOp<double>>(KernelBuilder("SoftmaxCrossEntropyWithLogits").TypeConstraint<double>("T"));

  RegisterOp(OpDefBuilder("SparseSoftmaxCrossEntropyWithLogits")
                 .Input("features: T")
                 .Input("labels: Tlabels")
                 .Output("loss: T")
                 .Output("backprop: T")
                 .Attr("T: {float, double}")
                 .Attr("Tlabels: {int32, int64} = DT_INT64")
                 .SetShapeFn(SparseXentShape)
                 .Doc("Per-example cross entropy of softmax(features) against class indices in [0, num_classes), "
                      "and its gradient."));
  const char* sparse = "SparseSoftmaxCrossEntropyWithLogits";
  RegisterKernel<SparseSoftmaxXentOp<float, int32_t>>(
      KernelBuilder(sparse).TypeConstraint<float>("T").TypeConstraint<int32_t>("Tlabels"));
  RegisterKernel<SparseSoftmaxXentOp<float, int64_t>>(
      KernelBuilder(sparse).TypeConstraint<float>("T").TypeConstraint<int64_t>("Tlabels"));
  RegisterKernel<SparseSoftmaxXentOp<double, int32_t>>(
      KernelBuilder(sparse).TypeConstraint<double>("T").TypeConstraint<int32_t>("Tlabels"));
  RegisterKernel<SparseSoftmaxXentOp<double, int64_t>>(
      KernelBuilder(sparse).TypeConstraint<double>("T").TypeConstraint<int64_t>("Tlabels"));

  RegisterOp(OpDefBuilder("L2Loss")
                 .Input("t: T")
                 .Output("output: T")
                 .Attr("T: {float, double}")
                 .SetShapeFn(ScalarShape)
                 .Doc("sum(t ** 2) / 2."));
  RegisterKernel<L2LossOp<float>>(KernelBuilder("L2Loss").TypeConstraint<float>("T"));
  RegisterKernel<L2LossOp<double>>(KernelBuilder("L2Loss").TypeConstraint<double>("T"));

  RegisterGradient("SoftmaxCrossEntropyWithLogits", SoftmaxXentGrad);
  RegisterGradient("SparseSoftmaxCrossEntropyWithLogits", SparseSoftmaxXentGrad);
  RegisterGradient("L2Loss", [](GradContext* c) {
    c->grad_inputs[0] = c->b->Op("Mul", {c->inputs[0], c->GradOrZeros(0)});
    return c->b->status();
  });
}

}  // namespace dflow
