#include "framework/shape_inference.h"

namespace dflow {

InferenceContext::InferenceContext(const NodeProperties* props, std::vector<PartialTensorShape> input_shapes,
                                   std::vector<const Tensor*> input_tensors)
    : props_(props),
      inputs_(std::move(input_shapes)),
      input_tensors_(std::move(input_tensors)),
      outputs_(props->output_types.size()) {
  input_tensors_.resize(inputs_.size(), nullptr);
}

Status InferenceContext::WithRank(const PartialTensorShape& s, int rank, PartialTensorShape* out) const {
  if (s.unknown_rank()) {
    *out = PartialTensorShape::UnknownOfRank(rank);
    return absl::OkStatus();
  }
  if (s.dims() != rank) {
    return errors::InvalidArgument("Shape must be rank ", rank, " but is rank ", s.dims());
  }
  *out = s;
  return absl::OkStatus();
}

Status InferenceContext::ShapeFromShapeTensor(int input, PartialTensorShape* out) const {
  const Tensor* t = input_tensor(input);
  if (t == nullptr) {
    const PartialTensorShape& s = inputs_[input];
    if (s.dims() == 1 && s.dim_size(0) >= 0 && s.dim_size(0) <= kMaxRank) {
      *out = PartialTensorShape::UnknownOfRank(static_cast<int>(s.dim_size(0)));
    } else {
      *out = PartialTensorShape();
    }
    return absl::OkStatus();
  }
  if (t->dims() != 1) {
    return errors::InvalidArgument("Shape tensor must be 1-D but has shape ", t->shape().DebugString());
  }
  std::vector<int64_t> dims;
  if (t->dtype() == DT_INT32) {
    for (int32_t d : t->flat<int32_t>()) dims.push_back(d);
  } else if (t->dtype() == DT_INT64) {
    for (int64_t d : t->flat<int64_t>()) dims.push_back(d);
  } else {
    return errors::InvalidArgument("Shape tensor must be int32 or int64, not ", DTypeString(t->dtype()));
  }
  ASSIGN_OR_RETURN(*out, PartialTensorShape::FromDims(dims));
  return absl::OkStatus();
}

Status UnknownShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialTensorShape());
  return absl::OkStatus();
}

Status UnchangedShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

Status ScalarShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialTensorShape::Scalar());
  return absl::OkStatus();
}

Status NoOutputs(InferenceContext*) { return absl::OkStatus(); }

StatusOr<PartialTensorShape> BroadcastShapes(const PartialTensorShape& a, const PartialTensorShape& b) {
  if (a.unknown_rank() || b.unknown_rank()) return PartialTensorShape();
  int rank = std::max(a.dims(), b.dims());
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    int ia = a.dims() - rank + i, ib = b.dims() - rank + i;
    int64_t da = ia >= 0 ? a.dim_size(ia) : 1;
    int64_t db = ib >= 0 ? b.dim_size(ib) : 1;
    if (da == 1) dims[i] = db;
    else if (db == 1) dims[i] = da;
    else if (da == -1 || db == -1) dims[i] = (da == -1) ? db : da;  // the known one, if it must match
    else if (da == db) dims[i] = da;
    else return errors::InvalidArgument("Incompatible shapes: ", a.DebugString(), " vs. ", b.DebugString());
    if (da == -1 && db == -1) dims[i] = -1;
  }
  return PartialTensorShape::FromDims(dims);
}

Status BroadcastBinaryShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(PartialTensorShape out, BroadcastShapes(c->input(0), c->input(1)));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace dflow
