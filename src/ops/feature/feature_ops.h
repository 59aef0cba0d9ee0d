// Helpers of the feature ops (Bucketize, StringToHashBucketFast, VocabularyLookup; registered by
// RegisterFeatureOps in ops/register_all.h) that other layers check attrs with.
#pragma once

#include "base/status.h"
#include "tensor/tensor.h"

namespace dflow {

namespace feature {
// Checks a VocabularyLookup's attrs: a non-empty 1-D vocabulary of string, int32 or int64
// without duplicates, num_oov_buckets >= 0, and not both OOV buckets and a default_value other
// than -1. Errors use TensorFlow's wording ("Duplicate keys", "Invalid num_oov_buckets").
Status CheckVocabulary(const Tensor& vocabulary, int64_t num_oov_buckets, int64_t default_value);
}  // namespace feature

}  // namespace dflow
