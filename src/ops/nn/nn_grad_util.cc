#include "ops/nn/nn_grad_util.h"

#include <limits>

namespace dflow {
namespace {
std::atomic<bool> g_may_use_sum{true};
}  // namespace

void SetLastAxisMayUseSumForTesting(bool may_use_sum) { g_may_use_sum.store(may_use_sum); }

NodeOut ShapeOf(GraphBuilder* b, const NodeOut& x) {
  if (x.node != nullptr) {
    const PartialTensorShape& s = x.node->output_shape(x.index);
    bool fits = s.IsFullyDefined();
    for (int i = 0; fits && i < s.dims(); ++i) fits = s.dim_size(i) <= std::numeric_limits<int32_t>::max();
    if (fits) {
      Tensor t(DT_INT32, TensorShape{s.dims()});
      for (int i = 0; i < s.dims(); ++i) t.data<int32_t>()[i] = static_cast<int32_t>(s.dim_size(i));
      return b->Const(t, "shape");
    }
  }
  return b->Op("Shape", {x}, {{"out_type", DT_INT32}});
}

NodeOut ZerosLike(GraphBuilder* b, const NodeOut& x) {
  return b->Op("Fill", {ShapeOf(b, x), b->Scalar(ValueType(x), 0)}, {}, "zeros");
}

AttrMap CopyAttrs(const Node* n, std::initializer_list<const char*> names) {
  AttrMap out;
  for (const char* name : names) {
    auto it = n->attrs().find(name);
    if (it != n->attrs().end()) out[name] = it->second;
  }
  return out;
}

LastAxis::LastAxis(GraphBuilder* b, const NodeOut& like) : b_(b), like_(like) {
  use_sum_ = g_may_use_sum.load() && OpRegistry::Global()->LookUp("Sum") != nullptr;
  if (like.node == nullptr) return;
  const PartialTensorShape& s = like.node->output_shape(like.index);
  rank_ = s.dims();
  if (rank_ > 0) depth_ = s.dim_size(rank_ - 1);
  if (!use_sum_ && (depth_ < 0 || depth_ > std::numeric_limits<int32_t>::max())) {
    b->SetError(errors::Unimplemented("The gradient of a softmax over a last dimension of unknown size needs the Sum "
                                      "op, which is not registered (shape ",
                                      s.DebugString(), ")"));
  }
}

NodeOut LastAxis::In(const NodeOut& x) {
  if (use_sum_) return x;
  Tensor shape(DT_INT32, TensorShape{2});
  shape.data<int32_t>()[0] = -1;
  shape.data<int32_t>()[1] = static_cast<int32_t>(depth_);
  return b_->Op("Reshape", {x, b_->Const(shape, "rows_shape")});
}

NodeOut LastAxis::SumKeepDims(const NodeOut& x) {
  if (use_sum_) {
    Tensor axis(DT_INT32, TensorShape{1});
    axis.data<int32_t>()[0] = rank_ > 0 ? rank_ - 1 : -1;
    return b_->Op("Sum", {x, b_->Const(axis, "last_axis")}, {{"keep_dims", true}});
  }
  if (ones_.node == nullptr && b_->ok()) {
    auto t = Tensor::Allocate(ValueType(x), TensorShape{depth_, 1});
    if (!t.ok()) {
      b_->SetError(t.status());
      return NodeOut{};
    }
    VisitNumeric(t->dtype(), [&]<typename T>() {
      for (T& v : t->flat<T>()) v = T{1};
    });
    ones_ = b_->Const(*t, "ones");
  }
  return b_->Op("MatMul", {x, ones_});
}

NodeOut LastAxis::Out(const NodeOut& x) {
  if (use_sum_) return x;
  return b_->Op("Reshape", {x, ShapeOf(b_, like_)});
}

NodeOut SoftmaxGradient(GraphBuilder* b, const NodeOut& g, const NodeOut& y) {
  LastAxis axis(b, y);
  NodeOut g2 = axis.In(g), y2 = axis.In(y);
  NodeOut dot = axis.SumKeepDims(b->Op("Mul", {g2, y2}));
  return axis.Out(b->Op("Mul", {b->Op("Sub", {g2, dot}), y2}));
}

}  // namespace dflow
