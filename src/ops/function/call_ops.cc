// PartitionedCall and StatefulPartitionedCall: TensorFlow 2's calls of a function of the graph's
// library (attr `f`; what tf.function writes into a GraphDef). The kernel instantiates the
// function once, at construction, through the FunctionLibraryRuntime it is built with, and runs
// it asynchronously on each call with the caller's cancellation. An error inside the function
// keeps its class and names the function and the failing node. `config`, `config_proto` and
// `executor_type` are accepted and ignored (the function runs on the caller's device). No
// gradient is registered: dflow does not differentiate through function calls.
#include "framework/cancellation.h"
#include "framework/function.h"
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"

namespace dflow {
namespace {

class PartitionedCallOp : public AsyncOpKernel {
 public:
  explicit PartitionedCallOp(OpKernelConstruction* c) : AsyncOpKernel(c) {
    NameAttrList f;
    Status s = c->GetAttr("f", &f);
    if (!s.ok()) {
      c->SetStatus(s);
      return;
    }
    if (c->function_library() == nullptr) {
      c->SetStatus(errors::Unimplemented(c->node().op, " '", c->node().name, "': no function library to run function '",
                                         f.name, "' here"));
      return;
    }
    StatusOr<std::shared_ptr<const InstantiatedFunction>> fn = c->function_library()->Instantiate(f.name);
    if (!fn.ok()) {
      c->SetStatus(errors::Annotate(fn.status(), absl::StrCat(c->node().op, " '", c->node().name, "': ")));
      return;
    }
    fn_ = *fn;
    if (fn_->arg_types().size() != static_cast<size_t>(num_inputs()) ||
        fn_->ret_types().size() != static_cast<size_t>(num_outputs())) {
      c->SetStatus(errors::InvalidArgument(c->node().op, " '", c->node().name, "': function '", f.name, "' takes ",
                                           fn_->arg_types().size(), " arguments and returns ", fn_->ret_types().size(),
                                           " results, but the call has ", num_inputs(), " inputs (Tin) and ",
                                           num_outputs(), " outputs (Tout)"));
      return;
    }
    for (int i = 0; i < num_outputs(); ++i) {
      if (fn_->ret_types()[i] != output_type(i)) {
        c->SetStatus(errors::InvalidArgument(c->node().op, " '", c->node().name, "': function '", f.name, "' returns ",
                                             DTypeString(fn_->ret_types()[i]), " as result ", i, " but Tout[", i,
                                             "] is ", DTypeString(output_type(i))));
        return;
      }
    }
  }

  bool IsExpensive() const override { return true; }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    std::vector<Tensor> args;
    args.reserve(ctx->num_inputs());
    for (int i = 0; i < ctx->num_inputs(); ++i) args.push_back(ctx->input(i));
    InstantiatedFunction::Options opts;
    opts.cancellation = ctx->step().cancellation;
    opts.step_id = ctx->step().step_id;
    opts.memory_budget = ctx->step().memory_budget;
    // fn_ is held by the kernel, which outlives the call (the executor keeps its kernels until
    // every node is done).
    fn_->RunAsync(opts, std::move(args),
                  [ctx, done = std::move(done), this](const Status& s, std::vector<Tensor> rets) {
                    if (!s.ok()) {
                      ctx->SetStatus(errors::Annotate(s, absl::StrCat(type_string(), " '", name(), "': ")));
                    } else {
                      for (int i = 0; i < ctx->num_outputs() && i < static_cast<int>(rets.size()); ++i) {
                        ctx->set_output(i, std::move(rets[i]));
                      }
                    }
                    done();
                  });
  }

 private:
  std::shared_ptr<const InstantiatedFunction> fn_;
};

void RegisterCall(const char* op, bool stateful) {
  OpDefBuilder b(op);
  b.Input("args: Tin")
      .Output("output: Tout")
      .Attr("Tin: list(type) >= 0")
      .Attr("Tout: list(type) >= 0")
      .Attr("f: func")
      .Attr("config: string = ''")
      .Attr("config_proto: string = ''")
      .Attr("executor_type: string = ''")
      .SetShapeFn(UnknownShape)
      .Doc("Calls the function `f` of the graph's library on `args`; its results.");
  if (stateful) b.SetIsStateful();
  RegisterOp(b);
  RegisterKernel<PartitionedCallOp>(KernelBuilder(op));
}

}  // namespace

void RegisterCallOps() {
  RegisterCall("PartitionedCall", false);
  RegisterCall("StatefulPartitionedCall", true);
}

}  // namespace dflow
