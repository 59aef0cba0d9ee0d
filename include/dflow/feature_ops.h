// Op functions of the feature family (see dflow/ops.h for the conventions: each adds one node to
// the scope's graph; errors go to the scope): the ops feature columns turn raw values into ids
// with, and Assert, which checks a condition while the graph runs.
//
//   Output bucket = ops::Bucketize(root, age, {18, 25, 65});            // int32 bucket ids
//   Output ids = ops::StringToHashBucketFast(root, words, 1000);        // int64, TensorFlow's ids
//   Output voc = ops::VocabularyLookup(root, words, Tensor of {"a", "b"}, {.num_oov_buckets = 2});
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dflow/ops.h"

namespace dflow::ops {

// The bucket of each value (int32, input's shape): i where boundaries[i-1] <= v < boundaries[i],
// 0 below the first boundary, boundaries.size() from the last one up. input is int32, int64,
// float or double; boundaries must be sorted ("Expected sorted boundaries" otherwise).
Output Bucketize(const Scope& scope, Input input, const std::vector<float>& boundaries);

// Fingerprint64(s) % num_buckets for each string (int64): the ids TensorFlow computes.
// num_buckets >= 1.
Output StringToHashBucketFast(const Scope& scope, Input input, int64_t num_buckets);

// The decimal text of each int32/int64 (bools: "true"/"false"), right-aligned in `width`
// characters padded with `fill` (" " or "0"; -1: no padding). TensorFlow's AsString, whose float
// formatting dflow does not have.
Output AsString(const Scope& scope, Input input, int64_t width = -1, const std::string& fill = "");

struct VocabularyLookupAttrs {
  int64_t num_oov_buckets = 0;  // >= 0
  int64_t default_value = -1;   // the id of a miss without OOV buckets (with them it must stay -1)
};
// The index of each key in `vocabulary` (a non-empty vector of string, int32 or int64 without
// duplicates, of keys' dtype), int64 in keys' shape. A miss gets vocabulary size +
// Fingerprint64(key) % num_oov_buckets (an integer key hashed as its decimal text, as TensorFlow's
// index tables do), or default_value without OOV buckets. dflow's own op, kept for graphs that use
// it: vocabulary columns build TensorFlow's HashTableV2 lookup (IndexTableLookup, dflow/lookup_ops.h).
Output VocabularyLookup(const Scope& scope, Input keys, const Tensor& vocabulary,
                        const VocabularyLookupAttrs& attrs = {});

// Fails the step with InvalidArgument "assertion failed: [data0] [data1] ..." (each data tensor's
// first `summarize` values) when `condition` (a bool scalar) is false. Give the ops that must
// not run unchecked a control dependency on it.
Operation Assert(const Scope& scope, Input condition, const std::vector<Input>& data, int64_t summarize = 3);

}  // namespace dflow::ops
