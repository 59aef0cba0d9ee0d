#include "dflow/feature_ops.h"

namespace dflow::ops {
namespace {
Output Out(const Operation& op) { return op.valid() ? Output(op, 0) : Output(); }
}  // namespace

Output Bucketize(const Scope& scope, Input input, const std::vector<float>& boundaries) {
  return Out(BuildOp(scope, "Bucketize", {std::move(input)}, {{"boundaries", boundaries}}));
}

Output StringToHashBucketFast(const Scope& scope, Input input, int64_t num_buckets) {
  return Out(BuildOp(scope, "StringToHashBucketFast", {std::move(input)}, {{"num_buckets", num_buckets}}));
}

Output AsString(const Scope& scope, Input input, int64_t width, const std::string& fill) {
  return Out(BuildOp(scope, "AsString", {std::move(input)}, {{"width", width}, {"fill", fill}}));
}

Output VocabularyLookup(const Scope& scope, Input keys, const Tensor& vocabulary, const VocabularyLookupAttrs& attrs) {
  return Out(BuildOp(scope, "VocabularyLookup", {std::move(keys)},
                     {{"vocabulary", vocabulary},
                      {"num_oov_buckets", attrs.num_oov_buckets},
                      {"default_value", attrs.default_value}}));
}

Operation Assert(const Scope& scope, Input condition, const std::vector<Input>& data, int64_t summarize) {
  std::vector<Input> inputs = {std::move(condition)};
  inputs.insert(inputs.end(), data.begin(), data.end());
  return BuildOp(scope, "Assert", inputs, {{"summarize", summarize}});
}

}  // namespace dflow::ops
