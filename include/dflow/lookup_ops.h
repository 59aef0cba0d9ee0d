// Lookup tables (TensorFlow's HashTableV2 family) and the graph's table initializers (TensorFlow's
// TABLE_INITIALIZERS collection, which tables_initializer groups and a Scaffold's default
// local_init_op and a SavedModel's main op run).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dflow/ops.h"

namespace dflow {
namespace ops {

struct HashTableAttrs {
  std::string container;
  std::string shared_name;
  bool use_node_name_sharing = false;
};

// A static hash table's handle (HashTableV2).
Output HashTableV2(const Scope& scope, DType key_dtype, DType value_dtype, const HashTableAttrs& attrs = {});
Output MutableHashTableV2(const Scope& scope, DType key_dtype, DType value_dtype, const HashTableAttrs& attrs = {});
// Fills a static table from key and value vectors (once).
Operation InitializeTableV2(const Scope& scope, Input table, Input keys, Input values);
Operation InitializeTableFromTextFileV2(const Scope& scope, Input table, Input filename, int64_t key_index,
                                        int64_t value_index, int64_t vocab_size = -1,
                                        const std::string& delimiter = "\t", int64_t offset = 0);
// The values of keys; default_value where a key is absent.
Output LookupTableFindV2(const Scope& scope, Input table, Input keys, Input default_value);
Output LookupTableSizeV2(const Scope& scope, Input table);
Operation LookupTableInsertV2(const Scope& scope, Input table, Input keys, Input values);

}  // namespace ops

// Adds `init` to the graph's table initializers (TensorFlow's TABLE_INITIALIZERS).
void AddTableInitializer(const Scope& scope, Operation init);
std::vector<Operation> TableInitializers(const Scope& scope);
// A NoOp (named by `scope`, "init_all_tables" by default) after every table initializer.
Operation TablesInitializer(const Scope& scope);

// TensorFlow's index_table_from_tensor(vocabulary, num_oov_buckets, default_value).lookup(keys):
// a HashTableV2 of vocabulary → position (its InitializeTableV2 added to the table initializers)
// looked up by LookupTableFindV2; with num_oov_buckets, a miss becomes size +
// StringToHashBucketFast(key as a string). `vocabulary` is a string or integer vector (integers
// are looked up as int64; `keys` must then be int64). Int64 ids of keys' shape.
Output IndexTableLookup(const Scope& scope, const Tensor& vocabulary, const Output& keys, int64_t num_oov_buckets,
                        int64_t default_value);

}  // namespace dflow
