#include "ops/testing/kernel_test_util.h"

#include "framework/device.h"
#include "framework/op_kernel.h"
#include "graph/graph.h"
#include "ops/register_all.h"

namespace dflow::testing {
namespace {

StatusOr<Node*> BuildNode(Graph* g, const std::string& op, const std::vector<Tensor>& inputs, AttrMap attrs) {
  RegisterAllOps();
  NodeSpec spec;
  spec.name = "node";
  spec.op = op;
  spec.attrs = std::move(attrs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    NodeSpec c;
    c.name = absl::StrCat("input", i);
    c.op = "Const";
    c.attrs["value"] = inputs[i];
    c.attrs["dtype"] = inputs[i].dtype();
    ASSIGN_OR_RETURN(Node * n, g->AddNode(std::move(c)));
    spec.inputs.push_back({n, 0});
  }
  return g->AddNode(std::move(spec));
}

}  // namespace

StatusOr<std::vector<Tensor>> RunOpKernel(const std::string& op, const std::vector<Tensor>& inputs, AttrMap attrs) {
  static Device* device = new Device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU");
  return RunOpKernelOn(device, op, inputs, std::move(attrs));
}

StatusOr<std::vector<Tensor>> RunOpKernelOn(Device* device, const std::string& op, const std::vector<Tensor>& inputs,
                                            AttrMap attrs) {
  Graph g;
  ASSIGN_OR_RETURN(Node * n, BuildNode(&g, op, inputs, std::move(attrs)));
  ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> k, KernelRegistry::Global()->CreateKernel(device, "CPU", n->props_ptr()));
  std::vector<TensorValue> in(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) in[i].tensor = inputs[i];
  StepParams step;
  step.device = device;
  OpKernelContext ctx(&step, k.get(), in.data(), static_cast<int>(in.size()));
  k->Compute(&ctx);
  RETURN_IF_ERROR(ctx.status());
  std::vector<Tensor> out;
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    const Tensor& t = ctx.outputs()[i].tensor;
    if (!t.IsInitialized()) return errors::Internal("Output ", i, " of ", op, " was not set");
    if (t.dtype() != n->output_type(i)) {
      return errors::Internal("Output ", i, " of ", op, " has type ", DTypeString(t.dtype()), ", declared ",
                              DTypeString(n->output_type(i)));
    }
    if (!n->output_shape(i).IsCompatibleWith(t.shape())) {
      return errors::Internal("Output ", i, " of ", op, " has shape ", t.shape().DebugString(),
                              " but the shape function said ", n->output_shape(i).DebugString());
    }
    out.push_back(t);
  }
  return out;
}

StatusOr<std::vector<PartialTensorShape>> InferShapes(const std::string& op, const std::vector<Tensor>& inputs,
                                                      AttrMap attrs) {
  Graph g;
  ASSIGN_OR_RETURN(Node * n, BuildNode(&g, op, inputs, std::move(attrs)));
  std::vector<PartialTensorShape> out;
  for (int i = 0; i < n->num_outputs(); ++i) out.push_back(n->output_shape(i));
  return out;
}

}  // namespace dflow::testing
