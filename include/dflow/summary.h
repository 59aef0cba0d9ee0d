// Summaries and event files: TensorFlow 1.x's tf.summary (scalar, histogram, merge, merge_all,
// FileWriter) and the reading of event files.
//
//   Scope root = Scope::NewRootScope();
//   summary::Scalar(root, "loss", loss);                 // op "loss", tag "loss"
//   summary::Histogram(root.NewSubScope("layer1"), "weights", w);  // tag "layer1/weights"
//   Output merged = summary::MergeAll(root);             // one serialized Summary per run
//   summary::FileWriter writer(logdir);
//   writer.AddGraph(*root.graph());
//   for (...) {
//     std::vector<Tensor> out;
//     session.Run({}, {merged}, {train_op}, &out);
//     writer.AddSummary(out[0], step);                    // returns any earlier write error
//   }
//   writer.Close();
//
// A summary op outputs a string scalar: a serialized Summary proto (proto/summary.proto). Build
// errors are recorded in the scope (scope.status()) and the functions then return an invalid
// Output, like every op function.
//
// The FileWriter and the reader (dflow/event_file.h, included here) are part of this API; see
// that header for their full contract:
//
//   class summary::FileWriter {
//     explicit FileWriter(const std::string& logdir, const FileWriterOptions& = {});
//         // FileWriterOptions{max_queue = 10, flush_secs = 120, filename_suffix = "", env}
//     Status AddSummary(absl::string_view serialized_summary, int64_t global_step);
//     Status AddSummary(const Tensor& summary, int64_t global_step);   // a fetched string scalar
//     Status AddScalar(const std::string& tag, double value, int64_t global_step);
//     Status AddEvent(const proto::Event& event);
//     Status AddGraph(const Graph& graph, int64_t global_step = 0);
//     Status AddGraphDef(const proto::GraphDef& graph_def, int64_t global_step = 0);
//     Status AddSessionLog(SessionStatus status, const std::string& msg, int64_t global_step,
//                          const std::string& checkpoint_path = "");
//     Status Flush();   Status Close();   Status status() const;
//     const std::string& path() const;  const std::string& logdir() const;
//   };
//   class summary::EventFileReader { static Open(path); Status ReadNext(proto::Event*); };
//   StatusOr<std::vector<summary::ScalarEvent>> summary::ReadScalars(path);   // tag, step, value
#pragma once

#include <string>
#include <vector>

#include "dflow/event_file.h"
#include "dflow/ops.h"

namespace dflow::ops {

// ScalarSummary(tags, values): one simple_value per element; tags (string) and values (a real
// type) must have the same shape. InvalidArgument otherwise, at build time when the static
// shapes differ.
Output ScalarSummary(const Scope& scope, Input tags, Input values);
// HistogramSummary(tag, values): a histogram of values (any shape, a real type) under the
// scalar string tag, with TensorFlow's default buckets. A NaN or infinite value is
// InvalidArgument when the op runs.
Output HistogramSummary(const Scope& scope, Input tag, Input values);
// MergeSummary(inputs): the union of the values of serialized Summary protos (string tensors of
// any shape). A tag that occurs twice is InvalidArgument naming it; an input that is not a
// Summary is InvalidArgument.
Output MergeSummary(const Scope& scope, const std::vector<Output>& inputs);

}  // namespace dflow::ops

namespace dflow::summary {

// A scalar summary of `value` (a real scalar). The op is named `name` in the scope's name scope
// (made unique: "loss", "loss_1") and the tag is that full name, as tf.summary.scalar does;
// characters TensorFlow does not allow in names become '_'. Added to the graph's summaries
// collection.
Output Scalar(const Scope& scope, const std::string& name, Input value);
// A histogram summary of `values` (any shape, a real type), named and collected as Scalar.
Output Histogram(const Scope& scope, const std::string& name, Input values);
// A MergeSummary of `inputs`, named as TensorFlow names it: "<scope>/Merge/MergeSummary" (then
// "Merge_1/..."). Not collected. At least one input.
Output Merge(const Scope& scope, const std::vector<Output>& inputs);
// Merge of every summary collected in the scope's graph so far; an invalid Output (and no
// error) when there is none, as tf.summary.merge_all returns None.
Output MergeAll(const Scope& scope);
// The summaries collected in the scope's graph so far, in order of creation.
std::vector<Output> AllSummaries(const Scope& scope);

}  // namespace dflow::summary
