// Test helper (for *_test.cc only): one node's kernel, kept alive across runs, whose inputs are
// Placeholders of unknown shape. Unlike testing::RunOpKernel, nothing about the input values is
// known while the graph is built, so the kernel's own checks are what is tested, and repeated
// Run calls reuse the same kernel object (stateful kernels such as random ops advance).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "framework/device.h"
#include "framework/op_kernel.h"
#include "graph/graph.h"
#include "ops/register_all.h"

namespace dflow::testing {

class KernelRunner {
 public:
  static StatusOr<std::unique_ptr<KernelRunner>> Create(const std::string& op, const std::vector<DType>& input_types,
                                                        AttrMap attrs = {}) {
    RegisterAllOps();
    auto r = std::unique_ptr<KernelRunner>(new KernelRunner);
    NodeSpec spec;
    spec.name = "node";
    spec.op = op;
    spec.attrs = std::move(attrs);
    for (size_t i = 0; i < input_types.size(); ++i) {
      NodeSpec p;
      p.name = absl::StrCat("input", i);
      p.op = "Placeholder";
      p.attrs["dtype"] = input_types[i];
      ASSIGN_OR_RETURN(Node * n, r->graph_.AddNode(std::move(p)));
      spec.inputs.push_back({n, 0});
    }
    ASSIGN_OR_RETURN(r->node_, r->graph_.AddNode(std::move(spec)));
    ASSIGN_OR_RETURN(r->kernel_, KernelRegistry::Global()->CreateKernel(device(), "CPU", r->node_->props_ptr()));
    return r;
  }

  // The inputs are moved into the kernel's input slots, as the executor does: an input that the
  // caller moves in (not through an initializer list, which copies) is held by the slot alone,
  // so a kernel may take its buffer for an output (forward_input_or_allocate_output).
  StatusOr<std::vector<Tensor>> Run(std::vector<Tensor> inputs) {
    std::vector<TensorValue> in(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) in[i].tensor = std::move(inputs[i]);
    inputs.clear();
    StepParams step;
    step.device = device();
    OpKernelContext ctx(&step, kernel_.get(), in.data(), static_cast<int>(in.size()));
    kernel_->Compute(&ctx);
    RETURN_IF_ERROR(ctx.status());
    std::vector<Tensor> out;
    for (int i = 0; i < ctx.num_outputs(); ++i) {
      const Tensor& t = ctx.outputs()[i].tensor;
      if (!t.IsInitialized()) return errors::Internal("Output ", i, " of ", node_->op(), " was not set");
      if (t.dtype() != node_->output_type(i)) {
        return errors::Internal("Output ", i, " of ", node_->op(), " has type ", DTypeString(t.dtype()));
      }
      out.push_back(t);
    }
    return out;
  }

  // Runs and returns output 0.
  StatusOr<Tensor> Run1(std::vector<Tensor> inputs) {
    ASSIGN_OR_RETURN(std::vector<Tensor> out, Run(std::move(inputs)));
    return out.at(0);
  }

  OpKernel* kernel() const { return kernel_.get(); }

 private:
  KernelRunner() = default;
  static Device* device() {
    static Device* d = new Device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU");
    return d;
  }

  Graph graph_;
  Node* node_ = nullptr;
  std::unique_ptr<OpKernel> kernel_;
};

}  // namespace dflow::testing
