// DynamicPartition: splits the rows of `data` into num_partitions outputs by a partition index
// per row — the inverse of DynamicStitch, and what embedding lookups over sharded tables use to
// send each id to its shard. Every partition index is checked before anything is copied.
#include <string>
#include <vector>

#include "framework/op_kernel.h"
#include "graph/gradients.h"
#include "ops/array/array_ops.h"
#include "ops/array/array_util.h"
#include "ops/array/grad_util.h"

namespace dflow {
namespace {

using namespace ::dflow::array;  // NOLINT: the family's own helpers

// outputs[i]: [?] + data.shape[partitions.rank:]; partitions' shape must start data's.
Status DynamicPartitionShape(InferenceContext* c) {
  const PartialTensorShape& data = c->input(0);
  const PartialTensorShape& partitions = c->input(1);
  if (data.unknown_rank() || partitions.unknown_rank()) {
    for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialTensorShape());
    return absl::OkStatus();
  }
  bool prefix = partitions.dims() <= data.dims();
  for (int d = 0; prefix && d < partitions.dims(); ++d) {
    prefix = partitions.dim_size(d) < 0 || data.dim_size(d) < 0 || partitions.dim_size(d) == data.dim_size(d);
  }
  if (!prefix) {
    return errors::InvalidArgument("DynamicPartition: data.shape = ", data.DebugString(),
                                   " does not start with partitions.shape = ", partitions.DebugString());
  }
  std::vector<int64_t> dims = {-1};
  dims.insert(dims.end(), data.dim_sizes().begin() + partitions.dims(), data.dim_sizes().end());
  ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(dims));
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, out);
  return absl::OkStatus();
}

class DynamicPartitionOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& partitions = ctx->input(1);
    const int num = num_outputs();
    bool prefix = partitions.dims() <= data.dims();
    for (int d = 0; prefix && d < partitions.dims(); ++d) prefix = partitions.dim_size(d) == data.dim_size(d);
    OP_REQUIRES(ctx, prefix,
                KernelError(*this, "data.shape = ", ShapeStr(data),
                            " does not start with partitions.shape = ", ShapeStr(partitions)));
    const int64_t n = partitions.NumElements();
    const int32_t* p = partitions.data<int32_t>();
    std::vector<int64_t> counts(num, 0);
    for (int64_t i = 0; i < n; ++i) {
      OP_REQUIRES(ctx, p[i] >= 0 && p[i] < num,
                  KernelError(*this, "partitions[", i, "] = ", p[i], " is not in [0, ", num, ")"));
      ++counts[p[i]];
    }
    std::vector<Tensor*> outs(num, nullptr);
    for (int k = 0; k < num; ++k) {
      DimVector dims = {counts[k]};
      dims.insert(dims.end(), data.shape().dim_sizes().begin() + partitions.dims(), data.shape().dim_sizes().end());
      OP_REQUIRES_ASSIGN(ctx, TensorShape shape, MakeShape(*this, dims));
      OP_REQUIRES_OK(ctx, ctx->allocate_output(k, shape, &outs[k]));
    }
    if (data.NumElements() == 0) return;
    const int64_t row = DimProduct(data.shape(), partitions.dims(), data.dims());
    const bool ok = VisitStorage(data.dtype(), [&]<typename E>() {
      const E* src = StorageData<E>(data);
      std::vector<E*> dst(num);
      for (int k = 0; k < num; ++k) dst[k] = StorageData<E>(outs[k]);
      for (int64_t i = 0; i < n; ++i) {
        CopyN(src + i * row, row, dst[p[i]]);
        dst[p[i]] += row;
      }
    });
    OP_REQUIRES(ctx, ok, KernelError(*this, "unsupported type ", DTypeString(data.dtype())));
  }
};

// The gradient of data: the gradients of the outputs stitched back into the rows they came
// from (outputs that no gradient reaches contribute zeros). As TensorFlow: partition the row
// numbers the same way, then DynamicStitch.
Status DynamicPartitionGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  const NodeOut data = c->inputs[0], partitions = c->inputs[1];
  const int num = static_cast<int>(c->outputs.size());
  NodeOut prefix_shape = b->Op("Shape", {partitions}, {{"out_type", DT_INT32}});
  NodeOut count = b->Op("Size", {partitions}, {{"out_type", DT_INT32}});
  NodeOut rows = b->Op("Reshape",
                       {b->Op("Range", {b->Scalar(DT_INT32, 0), count, b->Scalar(DT_INT32, 1)}), prefix_shape});
  Node* split = b->AddNode("DynamicPartition", {rows, partitions}, {{"num_partitions", int64_t{num}}});
  if (split == nullptr) return b->status();
  std::vector<NodeOut> inputs;
  for (int k = 0; k < num; ++k) inputs.push_back({split, k});
  for (int k = 0; k < num; ++k) inputs.push_back(c->GradOrZeros(k));
  NodeOut stitched = b->Op("DynamicStitch", inputs, {{"N", int64_t{num}}});
  c->grad_inputs[0] = b->Op("Reshape", {stitched, ShapeOf(b, data, DT_INT32)});
  return b->status();
}

}  // namespace

void RegisterPartitionOps() {
  RegisterOp(OpDefBuilder("DynamicPartition")
                 .Input("data: T")
                 .Input("partitions: int32")
                 .Output("outputs: num_partitions * T")
                 .Attr("num_partitions: int >= 1")
                 .Attr("T: type")
                 .SetShapeFn(DynamicPartitionShape)
                 .Doc("outputs[k]: the rows data[i] (in order) whose partitions[i] is k; partitions' shape "
                      "starts data's."));
  RegisterKernel<DynamicPartitionOp>(KernelBuilder("DynamicPartition"));
  RegisterGradient("DynamicPartition", DynamicPartitionGrad);
}

}  // namespace dflow
