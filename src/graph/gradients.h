// Automatic differentiation: the gradient registry and AddGradients, which adds to a graph the
// nodes that compute d(sum of ys * grad_ys)/d(xs).
//
// Each differentiable op registers a GradFn next to its kernels (in its src/ops/<family>/). A
// GradFn receives the forward node, its inputs and outputs, and the gradients flowing into its
// outputs, and builds the gradients of its inputs with the GraphBuilder it is given.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph/graph_builder.h"

namespace dflow {

struct GradContext {
  GraphBuilder* b;                    // builds into "gradients/<op name>_grad/"
  const Node* node;                   // the forward node
  std::vector<NodeOut> inputs;        // its inputs (references as they are)
  std::vector<NodeOut> outputs;       // its outputs
  std::vector<NodeOut> grad_outputs;  // d loss / d output i; a null NodeOut where none flows
  // To fill: d loss / d input i, one per input; leave null where no gradient flows (integer
  // inputs, shapes, indices).
  std::vector<NodeOut> grad_inputs;

  // grad_outputs[i], or zeros shaped like outputs[i] when none flows.
  NodeOut GradOrZeros(int i);
};

using GradFn = std::function<Status(GradContext*)>;

// The attr (true) of a gradient node that is the dense, table-sized sum of a sparse gradient: an
// UnsortedSegmentSum(values, indices, rows) built by the gradient of a gather. Optimizers may
// update only the rows `indices` instead (optimizers::SparseGradientOf).
inline constexpr char kSparseGradientAttr[] = "_sparse_gradient";

// Registers the gradient of `op`. CHECK-fails if one is registered already (a bug).
void RegisterGradient(const std::string& op, GradFn fn);
// Declares that `op` has no gradient and stops backpropagation (Shape, Const, comparisons...):
// its inputs get none, and it is not an error to meet it.
void RegisterNoGradient(const std::string& op);
// nullptr when none is registered; *no_gradient tells a RegisterNoGradient op.
const GradFn* LookupGradient(const std::string& op, bool* no_gradient);

// Adds the gradients of `ys` (weighted by `grad_ys`, ones when empty) with respect to `xs`.
// Returns one NodeOut per x: zeros shaped like x when x does not affect any y (a null NodeOut
// for a resource handle that no gradient reaches). Errors: an op on
// a path from xs to ys without a gradient ("No gradient defined for op 'Foo' (node 'n')").
// Gradient nodes request the device of the forward node they differentiate, or `device` when it
// requested none (the seeds, for example).
StatusOr<std::vector<NodeOut>> AddGradients(Graph* graph, const std::vector<NodeOut>& ys,
                                            const std::vector<NodeOut>& xs, const std::vector<NodeOut>& grad_ys = {},
                                            const std::string& prefix = "gradients", const std::string& device = "");

}  // namespace dflow
