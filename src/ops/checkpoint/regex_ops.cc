// RegexFullMatch and StaticRegexFullMatch with TensorFlow's names and signatures: whether each
// string matches a regular expression in full. TensorFlow's sharded Saver builds one
// (StaticRegexFullMatch "^s3://.*" on the checkpoint prefix), so that every SavedModel and
// MetaGraphDef it writes has it. Patterns are ECMAScript regular expressions (std::regex), which
// agree with RE2 on the common syntax; RE2-only syntax is an InvalidArgument error.
#include <regex>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/register_all.h"

namespace dflow {
namespace {

StatusOr<std::regex> Compile(const OpKernel& k, const std::string& pattern) {
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return errors::InvalidArgument(k.type_string(), " ", k.name(), ": invalid pattern '", pattern, "': ", e.what());
  }
}

Status FullMatch(OpKernelContext* ctx, const std::regex& re) {
  const Tensor& in = ctx->input(0);
  if (in.dtype() != DT_STRING) return errors::InvalidArgument("input must be a string tensor");
  Tensor* out = nullptr;
  RETURN_IF_ERROR(ctx->allocate_output(0, in.shape(), &out));
  for (int64_t i = 0; i < in.NumElements(); ++i) {
    out->data<bool>()[i] = std::regex_match(in.data<std::string>()[i], re);
  }
  return absl::OkStatus();
}

class StaticRegexFullMatchOp : public OpKernel {
 public:
  explicit StaticRegexFullMatchOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string pattern;
    Status s = c->GetAttr("pattern", &pattern);
    if (s.ok()) {
      auto re = Compile(*this, pattern);
      if (re.ok()) {
        re_ = std::move(*re);
      } else {
        s = re.status();
      }
    }
    c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override { OP_REQUIRES_OK(ctx, FullMatch(ctx, re_)); }

 private:
  std::regex re_;
};

class RegexFullMatchOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& p = ctx->input(1);
    OP_REQUIRES(ctx, p.dtype() == DT_STRING && p.dims() == 0,
                errors::InvalidArgument("Pattern must be scalar, but received ", p.shape().DebugString()));
    auto re = Compile(*this, p.data<std::string>()[0]);
    OP_REQUIRES_OK(ctx, re.status());
    OP_REQUIRES_OK(ctx, FullMatch(ctx, *re));
  }
};

}  // namespace

void RegisterRegexOps() {
  RegisterOp(OpDefBuilder("StaticRegexFullMatch")
                 .Input("input: string")
                 .Output("output: bool")
                 .Attr("pattern: string")
                 .SetShapeFn(UnchangedShape)
                 .Doc("Whether each string matches the regular expression `pattern` in full."));
  RegisterOp(OpDefBuilder("RegexFullMatch")
                 .Input("input: string")
                 .Input("pattern: string")
                 .Output("output: bool")
                 .SetShapeFn(UnchangedShape)
                 .Doc("Whether each string matches the scalar regular expression `pattern` in full."));
  RegisterKernel<StaticRegexFullMatchOp>(KernelBuilder("StaticRegexFullMatch"));
  RegisterKernel<RegexFullMatchOp>(KernelBuilder("RegexFullMatch"));
  RegisterNoGradient("StaticRegexFullMatch");
  RegisterNoGradient("RegexFullMatch");
}

}  // namespace dflow
