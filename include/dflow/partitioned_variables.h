// Partitioned variables: one logical variable stored as several VariableV2 shards along one
// axis, so that a big table (an embedding) spreads over several parameter servers — TensorFlow
// 1.x's partitioners, PartitionedVariable and embedding_lookup.
//
//   Scope s = root.WithDeviceFunction(train::ReplicaDeviceSetter(2));
//   PartitionedVariable emb = PartitionedVariable::Create(
//       s.WithOpName("emb"), {1000, 16}, DT_FLOAT, init::RandomUniform(-1, 1, 7),
//       FixedSizePartitioner(2));                  // emb/part_0 [500,16] on ps 0, part_1 on ps 1
//   Output rows = ops::EmbeddingLookup(s, emb, ids, "div");   // each shard gathers its own rows
//   Output full = emb.AsTensor(s);                 // [1000,16]
//
// Errors (a partitioner asked for 0 shards, an axis out of range, more shards than rows, ids
// that are not integers, ...) are recorded in the scope, as everywhere in the client API; the
// functions then return invalid values.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "dflow/variable.h"

namespace dflow {

// How many pieces a variable of `shape` and `dtype` is cut into along each dimension: one entry
// per dimension, each >= 1, at most one of them > 1.
using Partitioner = std::function<StatusOr<std::vector<int64_t>>(const TensorShape& shape, DType dtype)>;

// min(num_shards, shape[axis]) pieces along `axis` (negative counts from the end):
// tf.fixed_size_partitioner. num_shards must be >= 1.
Partitioner FixedSizePartitioner(int64_t num_shards, int axis = 0);

// As many pieces along `axis` as make each at least min_slice_size bytes —
// ceil(bytes / min_slice_size) — but at least 1 and at most max_partitions and shape[axis]:
// tf.min_max_variable_partitioner. A string element counts bytes_per_string_element bytes.
Partitioner MinMaxVariablePartitioner(int64_t max_partitions = 1, int axis = 0, int64_t min_slice_size = 256 << 10,
                                      int64_t bytes_per_string_element = 16);

class PartitionedVariable {
 public:
  PartitionedVariable() = default;

  // Creates the shards "<name>/part_0", "<name>/part_1", ... (Variables: VariableV2, Assign,
  // read; trainable, initialized by GlobalVariablesInitializer) along the one axis the
  // partitioner cuts (axis 0 when it cuts none: a single part_0). N pieces of a dimension of
  // size D: the first D % N pieces have D / N + 1 rows, the others D / N (TensorFlow's rule).
  // The default name is "Variable". Each shard is placed like a Variable::Create of the scope
  // (a ReplicaDeviceSetter spreads them over the ps tasks).
  //
  // The shards' initial values are the pieces of the value the initializer gives the whole
  // shape, so a partitioned variable starts equal to the unpartitioned variable with the same
  // initializer and seed. Zeros, Ones and scalar constants are filled per shard; other
  // initializers (random, Glorot, a full constant) build the whole value once, next to part_0,
  // and slice it there.
  static PartitionedVariable Create(const Scope& scope, const TensorShape& shape, DType dtype,
                                    const init::Initializer& initializer, const Partitioner& partitioner);

  bool valid() const { return !parts_.empty(); }
  const std::string& name() const { return name_; }
  const TensorShape& shape() const { return shape_; }  // the whole variable's
  DType dtype() const { return dtype_; }
  int axis() const { return axis_; }  // the partitioned axis
  int num_partitions() const { return static_cast<int>(parts_.size()); }
  const std::vector<Variable>& parts() const { return parts_; }
  // Where part i starts along axis(): the sum of the earlier parts' sizes there.
  int64_t offset(int i) const { return offsets_[i]; }

  // The whole value: the parts' reads concatenated along axis(), built in `scope` (under
  // "<name>/ConcatPartitions/"). Invalid (error recorded) for an invalid variable.
  Output AsTensor(const Scope& scope) const;

 private:
  std::string name_;
  TensorShape shape_;
  DType dtype_ = DT_INVALID;
  int axis_ = 0;
  std::vector<Variable> parts_;
  std::vector<int64_t> offsets_;
};

// PartitionedVariable::Create(scope.WithOpName(name), ...).
PartitionedVariable CreatePartitionedVariable(const Scope& scope, const std::string& name, const TensorShape& shape,
                                              DType dtype, const init::Initializer& initializer,
                                              const Partitioner& partitioner);

}  // namespace dflow

namespace dflow::ops {

// The rows of the table that `params` shards hold, for every id: tf.nn.embedding_lookup. The
// result has shape ids.shape + params[0].shape[1:]. ids are int32 or int64 (any shape).
//
// With one shard this is Gather(params[0], ids). With N shards, id goes to shard p at row r:
//   "mod": p = id % N, r = id / N
//   "div": with T = the sum of the shards' first dimensions, q = T / N and e = T % N (the first
//          e shards hold q + 1 ids, the rest q): p = max(id / (q + 1), (id - e) / q), and
//          r = id % (q + 1) when p < e, else (id - e) % q
// Each shard's Gather runs on the shard's device; the rows are stitched back in the order of
// the ids. Gradients flow to the shards (rows of shards that no id reaches get zeros). An id
// outside the table is an InvalidArgument error when the graph runs. Built under
// "embedding_lookup/".
Output EmbeddingLookup(const Scope& scope, const std::vector<Output>& params, Input ids,
                       absl::string_view partition_strategy = "mod");
// The shards of `params` (which must be partitioned along axis 0), each read where it lives.
// "div" looks up the same rows as Gather(params.AsTensor(), ids).
Output EmbeddingLookup(const Scope& scope, const PartitionedVariable& params, Input ids,
                       absl::string_view partition_strategy = "mod");

}  // namespace dflow::ops
