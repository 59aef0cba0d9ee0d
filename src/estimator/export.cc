// Estimator::ExportSavedModel: TensorFlow's export_saved_model for dflow's estimators, with the
// signatures TensorFlow's canned heads export.
#include "absl/strings/str_cat.h"
#include "base/env.h"
#include "base/logging.h"
#include "base/temp_file.h"
#include "dflow/array_ops.h"
#include "dflow/estimator.h"
#include "dflow/feature_ops.h"
#include "dflow/lookup_ops.h"
#include "dflow/ops.h"
#include "dflow/saved_model.h"
#include "dflow/saver.h"
#include "dflow/variable.h"

namespace dflow::estimator {
namespace {

// TensorFlow's _classification_output: every class id as a string, one row per example.
Output ClassesOf(const Scope& scope, const Output& probabilities, int64_t n_classes) {
  Scope s = scope.NewSubScope("export_classes");
  Output ids = ops::AsString(s, ops::Range(s, 0, static_cast<int32_t>(n_classes)));
  Output batch = ops::Slice(s, ops::Shape(s, probabilities), {0}, {1});
  Output multiples = ops::Concat(s, {batch, ops::Const(s, {1})}, 0);
  return ops::Tile(s, ops::ExpandDims(s, ids, 0), multiples);
}

StatusOr<std::map<std::string, proto::SignatureDef>> Signatures(const Scope& root, const EstimatorSpec& spec,
                                                                const ServingInputReceiver& r) {
  std::map<std::string, proto::SignatureDef> out;
  // The single serialized-examples input that classify and regress signatures take.
  Output examples;
  if (r.receiver_tensors.size() == 1 && BaseType(r.receiver_tensors.begin()->second.dtype()) == DT_STRING) {
    examples = r.receiver_tensors.begin()->second;
  }
  const auto& p = spec.predictions;
  auto has = [&](const char* k) { return p.count(k) > 0; };
  std::optional<proto::SignatureDef> default_sig;
  if (has("probabilities") && has("class_ids")) {
    const Output probabilities = p.at("probabilities");
    const PartialTensorShape shape = probabilities.shape();
    if (examples.valid() && shape.dims() == 2 && shape.dim_size(1) > 0) {
      Output classes = ClassesOf(root, probabilities, shape.dim_size(1));
      proto::SignatureDef c = BuildSignatureDef({{"inputs", examples}},
                                                {{"classes", classes}, {"scores", probabilities}}, kClassifyMethodName);
      out["classification"] = c;
      default_sig = c;
      if (has("logistic")) {
        out["regression"] = BuildSignatureDef({{"inputs", examples}}, {{"outputs", p.at("logistic")}},
                                              kRegressMethodName);
      }
    }
  } else if (p.size() == 1 && has("predictions")) {
    if (examples.valid()) {
      proto::SignatureDef reg = BuildSignatureDef({{"inputs", examples}}, {{"outputs", p.at("predictions")}},
                                                  kRegressMethodName);
      out["regression"] = reg;
      default_sig = reg;
    }
  }
  proto::SignatureDef predict = BuildSignatureDef(r.receiver_tensors, spec.predictions, kPredictMethodName);
  const bool canned = has("class_ids") || (p.size() == 1 && has("predictions"));
  if (!canned) {
    // A custom model_fn: TensorFlow's default export output, its predictions as serving_default.
    out[kDefaultServingSignatureDefKey] = predict;
    return out;
  }
  out["predict"] = predict;
  if (default_sig.has_value()) {
    out[kDefaultServingSignatureDefKey] = *default_sig;
  } else {
    LOG(WARNING) << "Export includes no default signature: the classify and regress signatures take one string "
                    "tensor of serialized examples (a parsing serving input receiver)";
  }
  return out;
}

}  // namespace

StatusOr<std::string> Estimator::ExportSavedModel(const std::string& export_dir_base,
                                                  const ServingInputReceiverFn& input_fn,
                                                  const ExportOptions& options) {
  RETURN_IF_ERROR(status_);
  if (!input_fn) return errors::InvalidArgument("An input_receiver_fn must be defined.");
  std::string checkpoint = options.checkpoint_path;
  if (checkpoint.empty()) {
    StatusOr<std::string> latest = train::LatestCheckpoint(model_dir_);
    if (!latest.ok()) {
      return errors::FailedPrecondition("Couldn't find trained model at ", model_dir_, ".");
    }
    checkpoint = *latest;
  } else if (!train::CheckpointExists(checkpoint)) {
    return errors::NotFound("The checkpoint to export does not exist: ", checkpoint, ".index is missing");
  }
  Scope root = Scope::NewRootScope();
  if (config_.tf_random_seed != 0) root.SetRandomSeed(config_.tf_random_seed);
  GetOrCreateGlobalStep(root);
  RETURN_IF_ERROR(root.status());
  ASSIGN_OR_RETURN(ServingInputReceiver receiver, input_fn(root));
  if (receiver.receiver_tensors.empty()) {
    return errors::InvalidArgument("The serving input receiver has no receiver tensors");
  }
  ASSIGN_OR_RETURN(EstimatorSpec spec, model_fn_(root, receiver.features, Output(), ModeKeys::kPredict, params_));
  if (spec.predictions.empty()) {
    return errors::InvalidArgument("Estimator: the model_fn's PREDICT spec has no predictions");
  }
  ASSIGN_OR_RETURN(auto signatures, Signatures(root, spec, receiver));
  // TensorFlow's default main op: the local variables' and the tables' initializers
  // (Scaffold.default_local_init_op).
  Operation local_init = LocalVariablesInitializer(root);
  if (!TableInitializers(root).empty()) {
    std::vector<Operation> parts = TableInitializers(root);
    parts.push_back(local_init);
    local_init = ops::Group(root.WithOpName("main_op"), parts);
  }
  train::SaverOptions so;
  so.sharded = true;
  so.write_meta_graph = false;
  train::Saver saver(root, so);
  RETURN_IF_ERROR(root.status());
  ClientSession session(root);
  RETURN_IF_ERROR(saver.Restore(session, checkpoint));

  Env* env = Env::Default();
  RETURN_IF_ERROR(env->CreateDirs(export_dir_base));
  // The export is the directory named by its timestamp (wall clock seconds: a name, not a
  // deadline); it is written under a temporary name unique to this export and renamed into place.
  int64_t stamp = env->NowMicros() / 1000000;
  while (env->FileExists(JoinPath(export_dir_base, absl::StrCat(stamp)))) ++stamp;
  const std::string temp = JoinPath(export_dir_base, absl::StrCat("temp-", stamp, "-", RandomTempSuffix()));
  SavedModelWriter writer;
  SavedModelWriter::Options wo;
  wo.main_op = local_init.name();
  RETURN_IF_ERROR(writer.AddMetaGraphAndVariables(root, session, saver, {kSavedModelTagServe}, signatures, wo));
  RETURN_IF_ERROR(writer.Save(temp, options.as_text));
  // Another export may take the same stamp meanwhile: rename(2) does not replace a non-empty
  // directory, so this one takes the next free stamp.
  for (int attempt = 0;; ++attempt, ++stamp) {
    const std::string final_dir = JoinPath(export_dir_base, absl::StrCat(stamp));
    if (env->FileExists(final_dir)) continue;
    Status s = env->RenameFile(temp, final_dir);
    if (s.ok()) {
      RETURN_IF_ERROR(env->SyncDir(export_dir_base));
      return final_dir;
    }
    if (attempt >= 16 || !env->FileExists(final_dir)) {
      return errors::Annotate(s, absl::StrCat("The export stays in ", temp, ": "));
    }
  }
}

}  // namespace dflow::estimator
