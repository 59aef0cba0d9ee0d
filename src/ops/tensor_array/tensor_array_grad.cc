// Gradients of the TensorArray ops, as TensorFlow's tensor_array_grad.py: each op's gradient
// works on the gradient array of its TensorArray (TensorArrayGradV3, one per gradient source)
// with the adjoint op — Read <-> Write, Gather <-> Scatter, Concat <-> Split — and passes the
// flow through, so that the gradient reads come after the gradient writes. Inside while loops
// the backward loop runs these ops once per iteration; the gradient array is made on first use
// and shared by every later iteration.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "graph/gradients.h"
#include "ops/register_all.h"

namespace dflow {
namespace {

// The gradient source: the gradient's name scope up to its first component that starts with
// "gradients" ("gradients", "gradients_1", "outer/gradients"), as TensorFlow's _GetGradSource.
std::string GradSource(const GraphBuilder& b) {
  std::vector<std::string> parts = absl::StrSplit(b.prefix(), '/', absl::SkipEmpty());
  for (size_t i = 0; i < parts.size(); ++i) {
    if (absl::StartsWith(parts[i], "gradients")) {
      return absl::StrJoin(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(i) + 1, "/");
    }
  }
  return parts.empty() ? std::string("gradients") : parts[0];
}

// {grad handle, grad flow} of the array behind `handle`.
std::pair<NodeOut, NodeOut> GradArray(GradContext* c, const NodeOut& handle, const NodeOut& flow) {
  Node* g = c->b->AddNode("TensorArrayGradV3", {handle, flow}, {{"source", GradSource(*c->b)}});
  if (g == nullptr) return {NodeOut(), NodeOut()};
  return {NodeOut{g, 0}, NodeOut{g, 1}};
}

DType AttrType(const Node* n, const char* name) {
  DType t = DT_INVALID;
  (void)GetAttr(n->attrs(), name, &t);
  return t;
}

}  // namespace

void RegisterTensorArrayGradients() {
  for (const char* op :
       {"TensorArrayV3", "TensorArrayGradV3", "TensorArrayGradWithShape", "TensorArraySizeV3", "TensorArrayCloseV3"}) {
    RegisterNoGradient(op);
  }
  // value = Read(handle, index, flow): write the value's gradient to the gradient array.
  RegisterGradient("TensorArrayReadV3", [](GradContext* c) {
    if (c->grad_outputs[0].node == nullptr) return absl::OkStatus();
    auto [gh, gflow] = GradArray(c, c->inputs[0], c->inputs[2]);
    c->grad_inputs[2] = c->b->Op("TensorArrayWriteV3", {gh, c->inputs[1], c->grad_outputs[0], gflow});
    return c->b->status();
  });
  // flow_out = Write(handle, index, value, flow): the value's gradient is read back.
  RegisterGradient("TensorArrayWriteV3", [](GradContext* c) {
    NodeOut flow = c->GradOrZeros(0);
    auto [gh, gflow] = GradArray(c, c->inputs[0], flow);
    c->grad_inputs[2] = c->b->Op("TensorArrayReadV3", {gh, c->inputs[1], gflow}, {{"dtype", AttrType(c->node, "T")}});
    c->grad_inputs[3] = flow;
    return c->b->status();
  });
  RegisterGradient("TensorArrayGatherV3", [](GradContext* c) {
    if (c->grad_outputs[0].node == nullptr) return absl::OkStatus();
    auto [gh, gflow] = GradArray(c, c->inputs[0], c->inputs[2]);
    c->grad_inputs[2] = c->b->Op("TensorArrayScatterV3", {gh, c->inputs[1], c->grad_outputs[0], gflow});
    return c->b->status();
  });
  RegisterGradient("TensorArrayScatterV3", [](GradContext* c) {
    NodeOut flow = c->GradOrZeros(0);
    auto [gh, gflow] = GradArray(c, c->inputs[0], flow);
    c->grad_inputs[2] = c->b->Op("TensorArrayGatherV3", {gh, c->inputs[1], gflow}, {{"dtype", AttrType(c->node, "T")}});
    c->grad_inputs[3] = flow;
    return c->b->status();
  });
  RegisterGradient("TensorArrayConcatV3", [](GradContext* c) {
    if (c->grad_outputs[0].node == nullptr) return absl::OkStatus();
    auto [gh, gflow] = GradArray(c, c->inputs[0], c->inputs[1]);
    c->grad_inputs[1] = c->b->Op("TensorArraySplitV3", {gh, c->grad_outputs[0], c->outputs[1], gflow});
    return c->b->status();
  });
  RegisterGradient("TensorArraySplitV3", [](GradContext* c) {
    NodeOut flow = c->GradOrZeros(0);
    auto [gh, gflow] = GradArray(c, c->inputs[0], flow);
    c->grad_inputs[1] = c->b->Op("TensorArrayConcatV3", {gh, gflow}, {{"dtype", AttrType(c->node, "T")}});
    c->grad_inputs[3] = flow;
    return c->b->status();
  });
}

}  // namespace dflow
