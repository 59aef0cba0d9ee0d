// Every gradient kernel (an op named *Grad, *GradGrad or *Backprop*) has a gradient of its own,
// so that second derivatives of the differentiable ops pass through them.
#include <string>

#include "framework/op_def.h"
#include "graph/gradients.h"
#include "gtest/gtest.h"
#include "ops/register_all.h"

namespace dflow {
namespace {

TEST(GradientRegistryTest, GradientKernelsAreDifferentiable) {
  RegisterAllOps();
  int checked = 0;
  for (const OpDef* def : OpRegistry::Global()->ListOps()) {
    const std::string& op = def->name;
    const bool grad_kernel = (op.size() > 4 && op.compare(op.size() - 4, 4, "Grad") == 0) ||
                             op.find("Backprop") != std::string::npos;
    if (!grad_kernel) continue;
    // TensorFlow differentiates neither: ResizeBilinearGrad is NotDifferentiable there and
    // ResizeNearestNeighborGrad has no gradient, so dflow's graphs keep TensorFlow's behaviour.
    if (op == "ResizeBilinearGrad" || op == "ResizeNearestNeighborGrad") continue;
    ++checked;
    bool no_gradient = false;
    EXPECT_NE(LookupGradient(op, &no_gradient), nullptr) << op << " has no gradient function";
  }
  // ReluGrad, Relu6Grad, EluGrad, SeluGrad, SoftplusGrad, MaxPoolGrad, MaxPoolGradGrad,
  // AvgPoolGrad, BiasAddGrad, StridedSliceGrad, Conv2DBackpropInput, Conv2DBackpropFilter.
  EXPECT_GE(checked, 12);
}

}  // namespace
}  // namespace dflow
