// The op functions of include/dflow/lookup_ops.h and the graph's table initializers.
#include "dflow/lookup_ops.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "api/scope_internal.h"
#include "dflow/array_ops.h"
#include "dflow/feature_ops.h"
#include "dflow/math_ops.h"

namespace dflow {
namespace ops {
namespace {

Output Out(const Operation& op) { return op.valid() ? Output(op, 0) : Output(); }

Output TableOp(const Scope& s, const char* op, DType k, DType v, const HashTableAttrs& a) {
  return Out(BuildOp(s, op, {},
                     {{"key_dtype", k},
                      {"value_dtype", v},
                      {"container", a.container},
                      {"shared_name", a.shared_name},
                      {"use_node_name_sharing", a.use_node_name_sharing}}));
}

}  // namespace

Output HashTableV2(const Scope& s, DType k, DType v, const HashTableAttrs& a) {
  return TableOp(s, "HashTableV2", k, v, a);
}
Output MutableHashTableV2(const Scope& s, DType k, DType v, const HashTableAttrs& a) {
  return TableOp(s, "MutableHashTableV2", k, v, a);
}
Operation InitializeTableV2(const Scope& s, Input table, Input keys, Input values) {
  return BuildOp(s, "InitializeTableV2", {std::move(table), std::move(keys), std::move(values)});
}
Operation InitializeTableFromTextFileV2(const Scope& s, Input table, Input filename, int64_t key_index,
                                        int64_t value_index, int64_t vocab_size, const std::string& delimiter,
                                        int64_t offset) {
  return BuildOp(s, "InitializeTableFromTextFileV2", {std::move(table), std::move(filename)},
                 {{"key_index", key_index},
                  {"value_index", value_index},
                  {"vocab_size", vocab_size},
                  {"delimiter", delimiter},
                  {"offset", offset}});
}
Output LookupTableFindV2(const Scope& s, Input table, Input keys, Input default_value) {
  return Out(BuildOp(s, "LookupTableFindV2", {std::move(table), std::move(keys), std::move(default_value)}));
}
Output LookupTableSizeV2(const Scope& s, Input table) {
  return Out(BuildOp(s, "LookupTableSizeV2", {std::move(table)}));
}
Operation LookupTableInsertV2(const Scope& s, Input table, Input keys, Input values) {
  return BuildOp(s, "LookupTableInsertV2", {std::move(table), std::move(keys), std::move(values)});
}

}  // namespace ops

void AddTableInitializer(const Scope& scope, Operation init) {
  if (init.valid()) scope.collections()->table_initializers.push_back(init);
}

std::vector<Operation> TableInitializers(const Scope& scope) { return scope.collections()->table_initializers; }

Operation TablesInitializer(const Scope& scope) {
  const std::vector<Operation> inits = TableInitializers(scope);
  return inits.empty() ? ops::NoOp(scope) : ops::Group(scope, inits);
}

Output IndexTableLookup(const Scope& scope, const Tensor& vocabulary, const Output& keys, int64_t num_oov_buckets,
                        int64_t default_value) {
  const Scope s = scope.NewSubScope("string_to_index");
  Tensor vocab = vocabulary;
  if (vocab.dtype() == DT_INT32) {
    Tensor v64(DT_INT64, vocab.shape());
    for (int64_t i = 0; i < vocab.NumElements(); ++i) v64.data<int64_t>()[i] = vocab.data<int32_t>()[i];
    vocab = v64;
  }
  Tensor ids(DT_INT64, TensorShape{vocab.NumElements()});
  for (int64_t i = 0; i < vocab.NumElements(); ++i) ids.data<int64_t>()[i] = i;
  // A shared name unique to this table, as TensorFlow's StaticHashTable gives one (hash_table_<uuid>).
  static std::mt19937_64 rng{std::random_device{}()};
  static std::mutex mu;
  std::string shared;
  {
    std::lock_guard<std::mutex> l(mu);
    shared = absl::StrCat("hash_table_", absl::Hex(rng(), absl::kZeroPad16), absl::Hex(rng(), absl::kZeroPad16));
  }
  const Scope hs = s.NewSubScope("hash_table");
  Output table = ops::HashTableV2(hs.WithOpName("hash_table"), vocab.dtype(), DT_INT64, {.shared_name = shared});
  Operation init = ops::InitializeTableV2(hs.WithOpName("table_init"), table, ops::Const(hs.WithOpName("keys"), vocab),
                                          ops::Const(hs.WithOpName("values"), ids));
  AddTableInitializer(scope, init);
  const Scope ls = s.NewSubScope("hash_table_Lookup");
  Output found = ops::LookupTableFindV2(ls, table, keys,
                                        ops::Const(ls.WithOpName("default_value"), Tensor(default_value)));
  if (num_oov_buckets <= 0) return found;
  Output key_strings = keys;  // (strings as they are)
  if (vocab.dtype() != DT_STRING) key_strings = ops::AsString(ls, keys);
  Output buckets = ops::StringToHashBucketFast(ls.WithOpName("hash_bucket"), key_strings, num_oov_buckets);
  buckets = ops::Add(ls, buckets, ops::LookupTableSizeV2(ls, table));
  return ops::SelectV2(ls, ops::NotEqual(ls, found, Tensor(default_value)), found, buckets);
}

}  // namespace dflow
