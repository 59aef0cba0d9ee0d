// The summary ops of the client API (include/dflow/summary.h) and the graph's summaries
// collection.
#include "dflow/summary.h"

#include "absl/strings/ascii.h"
#include "api/scope_internal.h"

namespace dflow {
namespace ops {

Output ScalarSummary(const Scope& scope, Input tags, Input values) {
  return Output(BuildOp(scope, "ScalarSummary", {std::move(tags), std::move(values)}, {}, "ScalarSummary"), 0);
}

Output HistogramSummary(const Scope& scope, Input tag, Input values) {
  return Output(BuildOp(scope, "HistogramSummary", {std::move(tag), std::move(values)}, {}, "HistogramSummary"), 0);
}

Output MergeSummary(const Scope& scope, const std::vector<Output>& inputs) {
  std::vector<Input> in(inputs.begin(), inputs.end());
  return Output(BuildOp(scope, "MergeSummary", in, {{"N", static_cast<int64_t>(inputs.size())}}, "MergeSummary"), 0);
}

}  // namespace ops

namespace summary {
namespace {

// tf.summary's tag cleaning: characters outside [A-Za-z0-9_.\-/] become '_', leading slashes go.
std::string CleanName(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool ok = absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '/';
    out.push_back(ok ? c : '_');
  }
  size_t start = out.find_first_not_of('/');
  return start == std::string::npos ? "" : out.substr(start);
}

// Builds `op` on (tag, values) as tf.summary does: the op is named `name` in the scope's name
// scope (made unique), its tag is that full name and is a Const "<name>/tag".
Output BuildNamedSummary(const Scope& scope, const std::string& op, const std::string& name, Input values) {
  if (!scope.ok()) return Output();
  const std::string clean = CleanName(name);
  if (clean.empty()) {
    scope.UpdateStatus(errors::InvalidArgument("Summary name '", name, "' is empty after cleaning"));
    return Output();
  }
  const std::string full = scope.GetUniqueNameForOp(clean);
  Output tag = ops::Const(ScopeAccess::WithPrefix(scope, full + "/").WithOpName("tag"), full);
  Output out(ops::BuildOp(ScopeAccess::WithPrefix(scope, "").WithOpName(full), op, {tag, std::move(values)}, {}, op),
             0);
  if (out.valid()) scope.collections()->summaries.push_back(out);
  return out;
}

}  // namespace

Output Scalar(const Scope& scope, const std::string& name, Input value) {
  return BuildNamedSummary(scope, "ScalarSummary", name, std::move(value));
}

Output Histogram(const Scope& scope, const std::string& name, Input values) {
  return BuildNamedSummary(scope, "HistogramSummary", name, std::move(values));
}

Output Merge(const Scope& scope, const std::vector<Output>& inputs) {
  if (!scope.ok()) return Output();
  if (inputs.empty()) {
    scope.UpdateStatus(errors::InvalidArgument("summary::Merge needs at least one summary"));
    return Output();
  }
  // TensorFlow's names: "Merge/MergeSummary", then "Merge_1/MergeSummary".
  return ops::MergeSummary(scope.NewSubScope("Merge"), inputs);
}

Output MergeAll(const Scope& scope) {
  if (!scope.ok()) return Output();
  const std::vector<Output> all = scope.collections()->summaries;
  if (all.empty()) return Output();
  return Merge(scope, all);
}

std::vector<Output> AllSummaries(const Scope& scope) { return scope.collections()->summaries; }

}  // namespace summary
}  // namespace dflow
