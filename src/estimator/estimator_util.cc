// The Estimator's progress hook and its helpers for results and checkpoints.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/env.h"
#include "base/logging.h"
#include "dflow/saver.h"
#include "estimator/estimator_internal.h"
#include "tensor/tensor_bundle.h"

namespace dflow::estimator {

ProgressHook::ProgressHook(Output loss, Output global_step, int64_t every_n_steps,
                           std::function<void(const std::string&)> log)
    : loss_(loss), global_step_(global_step), every_(every_n_steps), log_(std::move(log)) {}

StatusOr<train::SessionRunArgs> ProgressHook::BeforeRun(train::SessionRunContext*) {
  return train::SessionRunArgs{{global_step_, loss_}, {}, {}};
}

Status ProgressHook::AfterRun(train::SessionRunContext*, const train::SessionRunValues& values) {
  last_step_ = values.results[0].scalar<int64_t>();
  last_loss_ = values.results[1].scalar<float>();
  if (every_ <= 0) return absl::OkStatus();
  const auto now = std::chrono::steady_clock::now();
  std::string line;
  if (!printed_step_.has_value()) {
    line = absl::StrFormat("step %d: loss = %.6g", last_step_, last_loss_);
  } else if (last_step_ - *printed_step_ >= every_) {
    const double secs = std::chrono::duration<double>(now - printed_time_).count();
    const double rate = secs > 0 ? static_cast<double>(last_step_ - *printed_step_) / secs : 0;
    line = absl::StrFormat("step %d: loss = %.6g (%.1f steps/sec)", last_step_, last_loss_, rate);
  } else {
    return absl::OkStatus();
  }
  printed_step_ = last_step_;
  printed_time_ = now;
  Log(line);
  return absl::OkStatus();
}

void ProgressHook::Log(const std::string& line) const {
  if (log_) {
    log_(line);
  } else {
    LOG(INFO) << line;
  }
}

StatusOr<std::optional<int64_t>> CheckpointGlobalStep(const std::string& dir) {
  StatusOr<std::string> latest = train::LatestCheckpoint(dir);
  if (absl::IsNotFound(latest.status())) return std::optional<int64_t>();
  RETURN_IF_ERROR(latest.status());
  ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> reader, BundleReader::Open(Env::Default(), *latest));
  if (!reader->Contains("global_step")) return std::optional<int64_t>();
  ASSIGN_OR_RETURN(Tensor step, reader->Lookup("global_step"));
  if (step.NumElements() != 1 || (step.dtype() != DT_INT64 && step.dtype() != DT_INT32)) {
    return errors::DataLoss("Checkpoint ", *latest, ": global_step is a ", DTypeString(step.dtype()), " of shape ",
                            step.shape().DebugString(), ", not an integer scalar");
  }
  return std::optional<int64_t>(step.dtype() == DT_INT64 ? step.flat<int64_t>()[0] : step.flat<int32_t>()[0]);
}

StatusOr<double> ScalarAsDouble(const Tensor& t, const std::string& name) {
  if (t.NumElements() != 1) {
    return errors::InvalidArgument("Metric '", name, "' is not a scalar: shape ", t.shape().DebugString());
  }
  switch (t.dtype()) {
    case DT_FLOAT: return static_cast<double>(t.flat<float>()[0]);
    case DT_DOUBLE: return t.flat<double>()[0];
    case DT_INT32: return static_cast<double>(t.flat<int32_t>()[0]);
    case DT_INT64: return static_cast<double>(t.flat<int64_t>()[0]);
    case DT_BOOL: return t.flat<bool>()[0] ? 1.0 : 0.0;
    default: return errors::InvalidArgument("Metric '", name, "' is a ", DTypeString(t.dtype()), ", not a number");
  }
}

std::string FormatEvalResult(const EvalResult& result) {
  std::string s;
  for (const auto& [name, value] : result) {
    absl::StrAppend(&s, s.empty() ? "" : ", ", name, " = ", absl::StrFormat("%.6g", value));
  }
  return s;
}

Status SplitBatch(const std::vector<std::string>& keys, const std::vector<Tensor>& tensors,
                  std::vector<Prediction>* out) {
  if (tensors.empty()) return absl::OkStatus();
  int64_t batch = -1;
  for (size_t k = 0; k < tensors.size(); ++k) {
    const Tensor& t = tensors[k];
    if (t.dims() < 1) {
      return errors::InvalidArgument("Prediction '", keys[k], "' has no batch dimension: shape ",
                                     t.shape().DebugString());
    }
    if (batch >= 0 && t.dim_size(0) != batch) {
      return errors::InvalidArgument("Predictions have different batch sizes: '", keys[0], "' has ", batch, ", '",
                                     keys[k], "' has ", t.dim_size(0));
    }
    batch = t.dim_size(0);
  }
  for (int64_t i = 0; i < batch; ++i) {
    Prediction p;
    for (size_t k = 0; k < tensors.size(); ++k) {
      TensorShape row;
      for (int d = 1; d < tensors[k].dims(); ++d) row.AddDimUnchecked(tensors[k].dim_size(d));
      ASSIGN_OR_RETURN(Tensor slice, tensors[k].Slice(i, i + 1));
      ASSIGN_OR_RETURN(p[keys[k]], slice.Reshaped(row));
    }
    out->push_back(std::move(p));
  }
  return absl::OkStatus();
}

}  // namespace dflow::estimator
