#include "dflow/partitioned_variables.h"

#include <cmath>

#include "absl/strings/str_join.h"
#include "api/scope_internal.h"
#include "api/variable_internal.h"
#include "dflow/array_ops.h"

namespace dflow {
namespace {

// `axis` in [-rank, rank) mapped onto [0, rank).
StatusOr<int> PartitionAxis(const char* who, int axis, const TensorShape& shape) {
  const int rank = shape.dims();
  if (axis < -rank || axis >= rank) {
    return errors::InvalidArgument(who, ": axis ", axis, " is out of range for a variable of shape ",
                                   shape.DebugString(), " (rank ", rank, ")");
  }
  return axis < 0 ? axis + rank : axis;
}

// The partitioned axis and its number of pieces, from a partitioner's answer (TensorFlow's
// checks: one entry per dimension, none below 1, at most one above 1, no more pieces than rows).
Status CheckPartitions(const std::vector<int64_t>& parts, const TensorShape& shape, int* axis, int64_t* num) {
  if (static_cast<int>(parts.size()) != shape.dims()) {
    return errors::InvalidArgument("The partitioner returned ", parts.size(), " partition counts [",
                                   absl::StrJoin(parts, ","), "] for a variable of shape ", shape.DebugString(),
                                   " (rank ", shape.dims(), "); it must return one per dimension");
  }
  *axis = 0;
  *num = 1;
  bool found = false;
  for (int d = 0; d < shape.dims(); ++d) {
    if (parts[d] < 1) {
      return errors::InvalidArgument("The partitioner returned ", parts[d], " partitions for dimension ", d,
                                     " of shape ", shape.DebugString(), " (partitions [", absl::StrJoin(parts, ","),
                                     "]); every dimension needs at least 1");
    }
    if (parts[d] > shape.dim_size(d)) {
      return errors::InvalidArgument("Cannot create ", parts[d], " partitions of dimension ", d, " of size ",
                                     shape.dim_size(d), " (shape ", shape.DebugString(), ")");
    }
    if (parts[d] == 1) continue;
    if (found) {
      return errors::InvalidArgument("A variable can be partitioned along one dimension only; the partitioner "
                                     "returned [",
                                     absl::StrJoin(parts, ","), "] for shape ", shape.DebugString());
    }
    found = true;
    *axis = d;
    *num = parts[d];
  }
  return absl::OkStatus();
}

// A 1-D int64 Const of `v`.
Output Int64s(const Scope& s, const std::string& name, const std::vector<int64_t>& v) {
  return ops::Const(s.WithOpName(name), Input::Initializer(v));
}

}  // namespace

Partitioner FixedSizePartitioner(int64_t num_shards, int axis) {
  return [num_shards, axis](const TensorShape& shape, DType) -> StatusOr<std::vector<int64_t>> {
    if (num_shards < 1) {
      return errors::InvalidArgument("FixedSizePartitioner: num_shards must be at least 1, got ", num_shards);
    }
    ASSIGN_OR_RETURN(int a, PartitionAxis("FixedSizePartitioner", axis, shape));
    std::vector<int64_t> parts(shape.dims(), 1);
    parts[a] = std::min(num_shards, shape.dim_size(a));
    return parts;
  };
}

Partitioner MinMaxVariablePartitioner(int64_t max_partitions, int axis, int64_t min_slice_size,
                                      int64_t bytes_per_string_element) {
  return [=](const TensorShape& shape, DType dtype) -> StatusOr<std::vector<int64_t>> {
    if (max_partitions < 1) {
      return errors::InvalidArgument("MinMaxVariablePartitioner: max_partitions must be at least 1, got ",
                                     max_partitions);
    }
    if (min_slice_size < 1) {
      return errors::InvalidArgument("MinMaxVariablePartitioner: min_slice_size must be positive, got ",
                                     min_slice_size);
    }
    ASSIGN_OR_RETURN(int a, PartitionAxis("MinMaxVariablePartitioner", axis, shape));
    double element = BaseType(dtype) == DT_STRING ? static_cast<double>(bytes_per_string_element)
                                                  : static_cast<double>(DTypeSize(dtype));
    double bytes = static_cast<double>(shape.num_elements()) * element;
    double wanted = std::ceil(bytes / static_cast<double>(min_slice_size));
    int64_t n = std::min<double>(wanted, static_cast<double>(std::min(shape.dim_size(a), max_partitions)));
    std::vector<int64_t> parts(shape.dims(), 1);
    parts[a] = std::max<int64_t>(1, n);
    return parts;
  };
}

PartitionedVariable PartitionedVariable::Create(const Scope& scope, const TensorShape& shape, DType dtype,
                                                const init::Initializer& initializer, const Partitioner& partitioner) {
  PartitionedVariable v;
  if (!scope.ok()) return v;
  const std::string name = scope.GetUniqueNameForOp("Variable");
  auto fail = [&](const Status& s) {
    scope.UpdateStatus(errors::Annotate(s, absl::StrCat("Partitioned variable '", name, "': ")));
    return PartitionedVariable();
  };
  if (!partitioner) return fail(errors::InvalidArgument("no partitioner given"));
  if (shape.dims() == 0) return fail(errors::InvalidArgument("a scalar cannot be partitioned"));
  StatusOr<std::vector<int64_t>> parts = partitioner(shape, dtype);
  if (!parts.ok()) return fail(parts.status());
  int axis = 0;
  int64_t num = 1;
  if (Status s = CheckPartitions(*parts, shape, &axis, &num); !s.ok()) return fail(s);

  using Kind = init::Initializer::Kind;
  const bool fill = initializer.kind == Kind::kZeros || initializer.kind == Kind::kOnes ||
                    (initializer.kind == Kind::kConstant && initializer.value.IsInitialized() &&
                     initializer.value.dims() == 0);
  v.name_ = name;
  v.shape_ = shape;
  v.dtype_ = dtype;
  v.axis_ = axis;
  const int64_t dim = shape.dim_size(axis);
  const int64_t extra = dim % num;
  Output whole;  // the whole initial value, built once next to part_0 (when not filled per part)
  int64_t offset = 0;
  for (int64_t i = 0; i < num; ++i) {
    const int64_t rows = dim / num + (i < extra ? 1 : 0);
    std::vector<int64_t> part_dims(shape.dim_sizes().begin(), shape.dim_sizes().end());
    part_dims[axis] = rows;
    const TensorShape part_shape = TensorShape::FromDims(part_dims).value();  // no larger than `shape`
    auto value = [&](const Scope& s) -> Output {
      if (fill || num == 1) return VariableAccess::InitialValue(s, part_shape, dtype, initializer);
      if (!whole.valid()) {
        whole = VariableAccess::InitialValue(ScopeAccess::WithPrefix(s, name + "/Initializer/"), shape, dtype,
                                             initializer);
        if (!whole.valid()) return Output();
      }
      std::vector<int64_t> begin(shape.dims(), 0), size(shape.dim_sizes().begin(), shape.dim_sizes().end());
      begin[axis] = offset;
      size[axis] = rows;
      Scope at_whole = ScopeAccess::ColocatedWith(s, whole.node());  // ship only the slice
      return ops::Slice(at_whole.WithOpName("Slice"), whole, Int64s(at_whole, "begin", begin),
                        Int64s(at_whole, "size", size));
    };
    Variable part = VariableAccess::Make(scope, absl::StrCat(name, "/part_", i), part_shape, dtype, value);
    if (!part.ref().valid()) return PartitionedVariable();
    v.parts_.push_back(part);
    v.offsets_.push_back(offset);
    std::vector<int64_t> part_offset(shape.dims(), 0);
    part_offset[axis] = offset;
    scope.collections()->partitions[part.ref().node()] = {name, shape, part_offset};
    offset += rows;
  }
  return v;
}

Output PartitionedVariable::AsTensor(const Scope& scope) const {
  if (!scope.ok()) return Output();
  if (!valid()) {
    scope.UpdateStatus(errors::InvalidArgument("AsTensor of an invalid PartitionedVariable"));
    return Output();
  }
  Scope s = ScopeAccess::WithPrefix(scope, name_ + "/ConcatPartitions/");
  if (parts_.size() == 1) return ops::Identity(s, parts_[0].read());
  std::vector<Input> reads;
  for (const Variable& p : parts_) reads.push_back(p.read());
  return ops::Concat(s, reads, axis_);
}

PartitionedVariable CreatePartitionedVariable(const Scope& scope, const std::string& name, const TensorShape& shape,
                                              DType dtype, const init::Initializer& initializer,
                                              const Partitioner& partitioner) {
  return PartitionedVariable::Create(scope.WithOpName(name), shape, dtype, initializer, partitioner);
}

}  // namespace dflow
