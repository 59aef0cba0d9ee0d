// Assert: fails the step with InvalidArgument when its condition is false, its message made of
// the data tensors (TensorFlow's op, inputs and attrs). Stateful, so it is never pruned as a
// duplicate or folded; ops that must not run unchecked take a control dependency on it.
#include <string>

#include "absl/strings/str_cat.h"
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/register_all.h"

namespace dflow {
namespace {

// As TensorFlow's: the condition's shape is the kernel's to check.
Status AssertShape(InferenceContext* c) { return NoOutputs(c); }

// The first `summarize` values of t, flattened, as TensorFlow prints them ("7 8 9..."); a string
// scalar as it is (a message).
std::string Summarize(const Tensor& t, int64_t summarize) {
  if (t.dtype() == DT_STRING && t.NumElements() == 1) return t.data<std::string>()[0];
  if (t.dims() == 0) return t.ToString();
  auto flat = t.Reshaped(TensorShape({t.NumElements()}));
  if (!flat.ok()) return t.ToString();
  const bool cut = t.NumElements() > summarize;
  auto part = cut ? flat->Slice(0, summarize) : flat;
  if (!part.ok()) return t.ToString();
  std::string s = part->ToString();
  if (s.size() >= 2 && s.front() == '[' && s.back() == ']') s = s.substr(1, s.size() - 2);
  if (cut) s += "...";
  return s;
}

class AssertOp : public OpKernel {
 public:
  explicit AssertOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("summarize", &summarize_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    OP_REQUIRES(ctx, cond.dims() == 0,
                errors::InvalidArgument("Assert '", name(),
                                        "': In[0] should be a scalar: ", cond.shape().DebugString()));
    if (cond.data<bool>()[0]) return;
    std::string msg = "assertion failed: ";
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      absl::StrAppend(&msg, i > 1 ? " " : "", "[", Summarize(ctx->input(i), summarize_), "]");
    }
    ctx->SetStatus(errors::InvalidArgument(msg));
  }

 private:
  int64_t summarize_ = 3;
};

}  // namespace

void RegisterLoggingOps() {
  RegisterOp(OpDefBuilder("Assert")
                 .Input("condition: bool")
                 .Input("data: T")
                 .Attr("T: list(type)")
                 .Attr("summarize: int = 3")
                 .SetIsStateful()
                 .SetShapeFn(AssertShape)
                 .Doc("Fails with InvalidArgument, its message made of `data`, when `condition` is false."));
  RegisterKernel<AssertOp>(KernelBuilder("Assert"));
  RegisterNoGradient("Assert");
}

}  // namespace dflow
