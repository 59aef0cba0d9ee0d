// EmbeddingLookup: TensorFlow 1.x's embedding_lookup over one or several shards, built from
// GatherV2, DynamicPartition and DynamicStitch.
#include "api/scope_internal.h"
#include "dflow/array_ops.h"
#include "dflow/math_ops.h"
#include "dflow/partitioned_variables.h"

namespace dflow::ops {
namespace {

// `ids` as an Output (a literal becomes a Const), checked to be int32 or int64.
Output IdsOutput(const Scope& s, const Input& ids) {
  Output out = ids.is_initializer() ? Const(s.WithOpName("ids"), ids.initializer()) : ids.output();
  if (!s.ok()) return Output();
  if (!out.valid()) {
    s.UpdateStatus(errors::InvalidArgument("EmbeddingLookup: ids is an invalid Output (building it failed)"));
    return Output();
  }
  const DType t = BaseType(out.dtype());
  if (t != DT_INT32 && t != DT_INT64) {
    s.UpdateStatus(errors::InvalidArgument("EmbeddingLookup: ids must be int32 or int64, got ", DTypeString(t), " (",
                                           out.name(), ")"));
    return Output();
  }
  return out;
}

// The shard's first dimension as a 1-element int32 vector, computed where the shard lives.
Output FirstDim(const Scope& s, const Output& param) {
  Scope at = ScopeAccess::ColocatedWith(s, param.node());
  return Slice(at, Shape(at, param), {0}, {1});
}

// The strategy is "mod" or "div", and there is at least one shard, each a valid Output of rank
// at least 1 (or unknown rank).
Status CheckShards(const std::vector<Output>& params, absl::string_view partition_strategy) {
  if (partition_strategy != "mod" && partition_strategy != "div") {
    return errors::InvalidArgument("EmbeddingLookup: unrecognized partition strategy '", partition_strategy,
                                   "' (expected \"mod\" or \"div\")");
  }
  if (params.empty()) {
    return errors::InvalidArgument("EmbeddingLookup: params is empty: it needs at least one shard");
  }
  for (size_t p = 0; p < params.size(); ++p) {
    if (!params[p].valid()) {
      return errors::InvalidArgument("EmbeddingLookup: params[", p, "] is an invalid Output");
    }
    const PartialTensorShape& ps = params[p].shape();
    if (!ps.unknown_rank() && ps.dims() == 0) {
      return errors::InvalidArgument("EmbeddingLookup: params[", p, "] (", params[p].name(),
                                     ") is a scalar; shards must have at least one dimension");
    }
  }
  return absl::OkStatus();
}

// The row shape: static when the shards agree on it (*known: every shard's rank is known), else
// read from shard 0. InvalidArgument when the shards' rows differ.
Status StaticRowShape(const std::vector<Output>& params, PartialTensorShape* row, bool* known) {
  *known = true;
  for (const Output& p : params) {
    const PartialTensorShape& ps = p.shape();
    if (ps.unknown_rank()) {
      *known = false;
      continue;
    }
    std::vector<int64_t> rest(ps.dim_sizes().begin() + 1, ps.dim_sizes().end());
    PartialTensorShape r = PartialTensorShape::FromDims(rest).value();
    auto merged = row->MergeWith(r);
    if (!merged.ok()) {
      return errors::InvalidArgument("EmbeddingLookup: the shards' rows differ in shape: ", p.name(), " has shape ",
                                     ps.DebugString(), ", the others rows of ", row->DebugString());
    }
    *row = *merged;
  }
  return absl::OkStatus();
}

// The "div" strategy's shard of each id (*assignment) and its row there (*new_ids): the T rows
// are split in np contiguous ranges, the first T % np of them one row longer. False (with the
// error in `s`) when fewer rows than shards are known statically.
bool DivPartition(const Scope& s, const std::vector<Output>& params, const Output& flat, DType it, Output* assignment,
                  Output* new_ids) {
  const int64_t np = static_cast<int64_t>(params.size());
  // T = the table's rows: known statically when every shard's first dimension is, else summed
  // in the graph.
  int64_t total = 0;
  for (const Output& p : params) {
    const PartialTensorShape& ps = p.shape();
    if (ps.unknown_rank() || ps.dim_size(0) < 0) {
      total = -1;
      break;
    }
    total += ps.dim_size(0);
  }
  Input per(int64_t{0}), per1(int64_t{0}), extras(int64_t{0});  // q, q + 1 and e
  if (total >= 0) {
    if (total < np) {
      s.UpdateStatus(errors::InvalidArgument("EmbeddingLookup: the \"div\" strategy needs at least one row per "
                                             "shard, but the ",
                                             np, " shards hold ", total, " rows in all"));
      return false;
    }
    per = Input::Initializer(total / np);
    per1 = Input::Initializer(total / np + 1);
    extras = Input::Initializer(total % np);
  } else {
    std::vector<Input> dims;
    for (const Output& p : params) dims.push_back(FirstDim(s, p));
    Output t = Sum(s, Concat(s, dims, 0), 0);
    if (it != DT_INT32) t = Cast(s, t, it);
    Output q = FloorDiv(s, t, Input::Initializer(np));
    per = q;
    per1 = Add(s, q, 1);
    extras = FloorMod(s, t, Input::Initializer(np));
  }
  Output shifted = Sub(s, flat, extras);
  *assignment = Maximum(s, FloorDiv(s, flat, per1), FloorDiv(s, shifted, per));
  *new_ids = Select(s, Less(s, *assignment, extras), FloorMod(s, flat, per1), FloorMod(s, shifted, per));
  return true;
}

// The stitched rows reshaped back to ids.shape + row shape: a constant shape when both are known
// statically (so the result's static shape is known too), else computed.
Output ReshapeToIds(const Scope& s, const Output& stitched, const Output& id, const std::vector<Output>& params,
                    const PartialTensorShape& row, bool known) {
  const PartialTensorShape& id_shape = id.shape();
  if (known && row.IsFullyDefined() && id_shape.IsFullyDefined()) {
    std::vector<int64_t> dims(id_shape.dim_sizes().begin(), id_shape.dim_sizes().end());
    dims.insert(dims.end(), row.dim_sizes().begin(), row.dim_sizes().end());
    return Reshape(s, stitched, Const(s.WithOpName("shape"), Input::Initializer(dims)));
  }
  Output row_shape;
  if (known && row.IsFullyDefined()) {
    row_shape = Const(s.WithOpName("row_shape"),
                      Input::Initializer(std::vector<int32_t>(row.dim_sizes().begin(), row.dim_sizes().end())));
  } else {
    Scope at = ScopeAccess::ColocatedWith(s, params[0].node());
    row_shape = Slice(at, Shape(at, params[0]), {1}, {-1});
  }
  return Reshape(s, stitched, Concat(s, {Shape(s, id), row_shape}, 0));
}

}  // namespace

Output EmbeddingLookup(const Scope& scope, const std::vector<Output>& params, Input ids,
                       absl::string_view partition_strategy) {
  if (!scope.ok()) return Output();
  PartialTensorShape row;
  bool known = true;
  Status checked = CheckShards(params, partition_strategy);
  if (checked.ok()) checked = StaticRowShape(params, &row, &known);
  if (!checked.ok()) {
    scope.UpdateStatus(checked);
    return Output();
  }
  Scope s = scope.NewSubScope("embedding_lookup");
  Output id = IdsOutput(s, ids);
  if (!id.valid()) return Output();
  const int64_t np = static_cast<int64_t>(params.size());
  if (np == 1) {
    Output rows = Gather(ScopeAccess::ColocatedWith(s, params[0].node()), params[0], id, 0);
    return Identity(s, rows);
  }
  const DType it = BaseType(id.dtype());
  Output flat = Reshape(s, id, {-1});
  Output positions = Range(s, 0, Size(s, flat), 1);
  Output assignment, new_ids;
  if (partition_strategy == "mod") {
    assignment = FloorMod(s, flat, Input::Initializer(np));
    new_ids = FloorDiv(s, flat, Input::Initializer(np));
  } else if (!DivPartition(s, params, flat, it, &assignment, &new_ids)) {
    return Output();
  }
  if (it != DT_INT32) assignment = Cast(s, assignment, DT_INT32);
  std::vector<Output> shard_ids = DynamicPartition(s, new_ids, assignment, np);
  std::vector<Output> shard_positions = DynamicPartition(s, positions, assignment, np);
  if (!s.ok()) return Output();
  std::vector<Input> rows, where;
  for (int64_t p = 0; p < np; ++p) {
    rows.push_back(Gather(ScopeAccess::ColocatedWith(s, params[p].node()), params[p], shard_ids[p], 0));
    where.push_back(shard_positions[p]);
  }
  Output stitched = DynamicStitch(s, where, rows);
  return ReshapeToIds(s, stitched, id, params, row, known);
}

Output EmbeddingLookup(const Scope& scope, const PartitionedVariable& params, Input ids,
                       absl::string_view partition_strategy) {
  if (!scope.ok()) return Output();
  if (!params.valid()) {
    scope.UpdateStatus(errors::InvalidArgument("EmbeddingLookup: params is an invalid PartitionedVariable"));
    return Output();
  }
  if (params.axis() != 0 && params.num_partitions() > 1) {
    scope.UpdateStatus(errors::InvalidArgument("EmbeddingLookup: '", params.name(), "' is partitioned along axis ",
                                               params.axis(), "; a lookup needs shards of rows (axis 0)"));
    return Output();
  }
  std::vector<Output> shards;
  for (const Variable& v : params.parts()) shards.push_back(v.read());
  return EmbeddingLookup(scope, shards, std::move(ids), partition_strategy);
}

}  // namespace dflow::ops
