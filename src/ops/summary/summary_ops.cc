// Summary ops: ScalarSummary, HistogramSummary, TensorSummaryV2 and MergeSummary, with
// TensorFlow's signatures. Each outputs a string scalar holding a serialized Summary proto
// (proto/summary.proto), which a FileWriter writes into an event file.
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_set>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "ops/register_all.h"
#include "ops/summary/histogram.h"
#include "proto/summary.pb.h"
#include "tensor/tensor_proto.h"

namespace dflow {
namespace {

// " (tag 'x')" when there is exactly one tag: TensorFlow's hint in shape errors.
std::string SingleTag(const Tensor& tags) {
  if (tags.NumElements() != 1) return "";
  return absl::StrCat(" (tag '", tags.flat<std::string>()[0], "')");
}

Status SetSummaryOutput(OpKernelContext* ctx, const proto::Summary& s) {
  Tensor out(DT_STRING, TensorShape());
  if (!s.SerializeToString(&out.scalar<std::string>())) {
    return errors::InvalidArgument("The summary is too large to serialize (over 2 GiB)");
  }
  ctx->set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- ScalarSummary ----

// float(v), with values beyond float's range made infinite explicitly (the plain conversion of
// an out-of-range double is undefined behaviour).
template <typename T>
float ToFloat(T v) {
  const double d = static_cast<double>(v);
  if (d > FLT_MAX) return std::numeric_limits<float>::infinity();
  if (d < -FLT_MAX) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(d);
}

Status ScalarSummaryShape(InferenceContext* c) {
  const PartialTensorShape& tags = c->input(0);
  const PartialTensorShape& values = c->input(1);
  if (tags.IsFullyDefined() && values.IsFullyDefined() && !tags.IsCompatibleWith(values)) {
    return errors::InvalidArgument("tags and values not the same shape: ", tags.DebugString(),
                                   " != ", values.DebugString());
  }
  c->set_output(0, PartialTensorShape({}));
  return absl::OkStatus();
}

template <typename T>
class ScalarSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& tags = ctx->input(0);
    const Tensor& values = ctx->input(1);
    OP_REQUIRES(ctx, tags.shape() == values.shape(),
                errors::InvalidArgument("tags and values not the same shape: ", tags.shape().DebugString(),
                                        " != ", values.shape().DebugString(), SingleTag(tags)));
    auto t = tags.flat<std::string>();
    auto v = values.flat<T>();
    proto::Summary s;
    for (size_t i = 0; i < t.size(); ++i) {
      proto::Summary::Value* value = s.add_value();
      value->set_tag(t[i]);
      value->set_simple_value(ToFloat(v[i]));
    }
    OP_REQUIRES_OK(ctx, SetSummaryOutput(ctx, s));
  }
};

// ---- HistogramSummary ----

Status HistogramSummaryShape(InferenceContext* c) {
  PartialTensorShape tag;
  Status s = c->WithRank(c->input(0), 0, &tag);
  if (!s.ok()) return errors::InvalidArgument("tags must be scalar, got shape ", c->input(0).DebugString());
  c->set_output(0, PartialTensorShape({}));
  return absl::OkStatus();
}

template <typename T>
class HistogramSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& tag = ctx->input(0);
    const Tensor& values = ctx->input(1);
    OP_REQUIRES(ctx, tag.dims() == 0,
                errors::InvalidArgument("tags must be scalar, got shape ", tag.shape().DebugString()));
    Histogram histo;
    auto v = values.flat<T>();
    for (size_t i = 0; i < v.size(); ++i) {
      const double x = static_cast<double>(v[i]);
      OP_REQUIRES(ctx, !std::isnan(x),
                  errors::InvalidArgument("Nan in summary histogram for: ", name(), " (element ", i, ")"));
      OP_REQUIRES(ctx, !std::isinf(x),
                  errors::InvalidArgument("Infinity in summary histogram for: ", name(), " (element ", i, ")"));
      histo.Add(x);
    }
    proto::Summary s;
    proto::Summary::Value* value = s.add_value();
    value->set_tag(tag.scalar<std::string>());
    histo.EncodeToProto(value->mutable_histo());
    OP_REQUIRES_OK(ctx, SetSummaryOutput(ctx, s));
  }
};

// ---- TensorSummaryV2 ----

class TensorSummaryV2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& tag = ctx->input(0);
    const Tensor& tensor = ctx->input(1);
    const Tensor& metadata = ctx->input(2);
    OP_REQUIRES(ctx, tag.dims() == 0,
                errors::InvalidArgument("tag must be scalar, got shape ", tag.shape().DebugString()));
    OP_REQUIRES(ctx, metadata.dims() == 0,
                errors::InvalidArgument("serialized_summary_metadata must be scalar, got shape ",
                                        metadata.shape().DebugString()));
    OP_REQUIRES(ctx, tensor.dtype() != DT_RESOURCE,
                errors::InvalidArgument("TensorSummaryV2 cannot summarize a resource handle"));
    proto::Summary s;
    proto::Summary::Value* value = s.add_value();
    OP_REQUIRES(ctx, value->mutable_metadata()->ParseFromString(metadata.scalar<std::string>()),
                errors::InvalidArgument("serialized_summary_metadata is not a SummaryMetadata proto"));
    value->set_tag(tag.scalar<std::string>());
    TensorToProto(tensor, value->mutable_tensor());
    OP_REQUIRES_OK(ctx, SetSummaryOutput(ctx, s));
  }
};

// ---- MergeSummary ----

class MergeSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    proto::Summary merged;
    std::unordered_set<std::string> tags;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      for (const std::string& bytes : ctx->input(i).flat<std::string>()) {
        proto::Summary in;
        OP_REQUIRES(ctx, in.ParseFromString(bytes),
                    errors::InvalidArgument("Could not parse one of the summary inputs (input ", i, ")"));
        for (proto::Summary::Value& v : *in.mutable_value()) {
          // Values without a tag (TensorSummary's) cannot clash.
          OP_REQUIRES(ctx, v.tag().empty() || tags.insert(v.tag()).second,
                      errors::InvalidArgument("Duplicate tag ", v.tag(), " found in summary inputs"));
          *merged.add_value() = std::move(v);
        }
      }
    }
    OP_REQUIRES_OK(ctx, SetSummaryOutput(ctx, merged));
  }
};

template <typename... Ts>
void RegisterRealKernels() {
  (RegisterKernel<ScalarSummaryOp<Ts>>(KernelBuilder("ScalarSummary").TypeConstraint<Ts>("T")), ...);
  (RegisterKernel<HistogramSummaryOp<Ts>>(KernelBuilder("HistogramSummary").TypeConstraint<Ts>("T")), ...);
}

}  // namespace

void RegisterSummaryOps() {
  RegisterOp(OpDefBuilder("ScalarSummary")
                 .Input("tags: string")
                 .Input("values: T")
                 .Output("summary: string")
                 .Attr("T: {float, double, int32, int64, uint8}")
                 .SetShapeFn(ScalarSummaryShape)
                 .Doc("A Summary with one simple_value per element of values, tagged by the same element of "
                      "tags (same shape)."));
  RegisterOp(OpDefBuilder("HistogramSummary")
                 .Input("tag: string")
                 .Input("values: T")
                 .Output("summary: string")
                 .Attr("T: {float, double, int32, int64, uint8} = float")
                 .SetShapeFn(HistogramSummaryShape)
                 .Doc("A Summary with a histogram of values (TensorFlow's default buckets); non-finite values "
                      "are an error."));
  RegisterOp(OpDefBuilder("TensorSummaryV2")
                 .Input("tag: string")
                 .Input("tensor: T")
                 .Input("serialized_summary_metadata: string")
                 .Output("summary: string")
                 .Attr("T: type")
                 .SetShapeFn(ScalarShape)
                 .Doc("A Summary holding the tensor itself, with the given SummaryMetadata."));
  RegisterOp(OpDefBuilder("MergeSummary")
                 .Input("inputs: N * string")
                 .Output("summary: string")
                 .Attr("N: int >= 1")
                 .SetShapeFn(ScalarShape)
                 .Doc("The union of the values of serialized Summary protos; a duplicate tag is an error."));
  RegisterRealKernels<float, double, int32_t, int64_t, uint8_t>();
  RegisterKernel<TensorSummaryV2Op>(KernelBuilder("TensorSummaryV2"));
  RegisterKernel<MergeSummaryOp>(KernelBuilder("MergeSummary"));
}

}  // namespace dflow
