// SavedModel: TensorFlow 1.x's export format — a directory with saved_model.pb (a SavedModel: one
// MetaGraphDef per tag set), variables/variables.{index,data-00000-of-00001} (a V2 checkpoint)
// and assets/ (files the graph reads; their paths are fed to the asset tensors).
//
//   auto bundle = LoadSavedModel(SessionOptions(), RunOptions(), "/models/m/1", {"serve"});
//   auto out = RunSignature(*bundle, "serving_default", {{"x", x}}, {"y"});   // by signature keys
//
//   SavedModelWriter w;                                   // writing one that TensorFlow loads
//   Status s = w.AddMetaGraphAndVariables(root, session, saver, {"serve"}, {{"serving_default", sig}});
//   s = w.Save("/models/m/2");
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "dflow/meta_graph.h"
#include "dflow/saver.h"
#include "dflow/session.h"
#include "dflow/session_interface.h"
#include "dflow/status.h"
#include "proto/saved_model.pb.h"

namespace dflow {

inline constexpr char kSavedModelTagServe[] = "serve";
inline constexpr char kSavedModelTagTrain[] = "train";
inline constexpr char kDefaultServingSignatureDefKey[] = "serving_default";
inline constexpr char kPredictMethodName[] = "tensorflow/serving/predict";
inline constexpr char kClassifyMethodName[] = "tensorflow/serving/classify";
inline constexpr char kRegressMethodName[] = "tensorflow/serving/regress";
inline constexpr char kSavedModelMainOpKey[] = "saved_model_main_op";
inline constexpr char kSavedModelLegacyInitOpKey[] = "legacy_init_op";
inline constexpr char kSavedModelAssetsKey[] = "saved_model_assets";
inline constexpr char kSavedModelInitOpSignatureKey[] = "__saved_model_init_op";

struct SavedModelBundle {
  std::unique_ptr<Session> session;
  proto::MetaGraphDef meta_graph;
  std::map<std::string, proto::SignatureDef> signatures;  // meta_graph's signature_def
};

// Whether `dir` holds saved_model.pb or saved_model.pbtxt.
bool MaybeSavedModelDirectory(const std::string& dir);
// The SavedModel of `dir` (saved_model.pb, else saved_model.pbtxt). NotFound without either.
StatusOr<proto::SavedModel> ReadSavedModel(const std::string& dir);

// Loads the MetaGraphDef whose tag set is `tags`: creates a session with its graph, restores the
// variables from export_dir/variables/variables through its SaverDef, then runs its main op
// (collection saved_model_main_op, else legacy_init_op, else signature __saved_model_init_op)
// with each asset tensor fed its file's path in export_dir/assets. NotFound naming the tag sets
// present when none matches. Without a session_options.default_container, the bundle's variables
// live in a container of their own.
StatusOr<SavedModelBundle> LoadSavedModel(const SessionOptions& session_options, const RunOptions& run_options,
                                          const std::string& export_dir, const std::set<std::string>& tags);

// Runs signature `key` of the bundle: `inputs` by input key, returns the outputs named in
// `output_keys` (all of the signature's outputs, sorted by key, when empty), in that order.
// NotFound naming the keys present for an unknown signature, input or output key.
StatusOr<std::vector<Tensor>> RunSignature(const SavedModelBundle& bundle, const std::string& key,
                                           const std::vector<std::pair<std::string, Tensor>>& inputs,
                                           const std::vector<std::string>& output_keys = {},
                                           std::vector<std::string>* output_keys_out = nullptr);

// A TensorInfo for an output of the graph (its name, dtype and static shape).
proto::TensorInfo BuildTensorInfo(const Output& output);
// A SignatureDef of {key: TensorInfo} inputs and outputs with `method_name`.
proto::SignatureDef BuildSignatureDef(const std::map<std::string, Output>& inputs,
                                      const std::map<std::string, Output>& outputs,
                                      const std::string& method_name = kPredictMethodName);

// Writes SavedModels as TensorFlow's SavedModelBuilder does: TensorFlow's loader loads them.
class SavedModelWriter {
 public:
  struct Options {
    std::string main_op;                     // an op name, run after the restore ("" none)
    std::vector<std::string> asset_files;    // paths copied into assets/; see asset_tensors
    std::vector<std::string> asset_tensors;  // the string tensor fed each asset's path ("path:0")
    bool clear_devices = false;
  };
  // Adds the scope's graph as the MetaGraphDef tagged `tags`; Save then writes the variables of
  // `session` with `saver` to export_dir/variables/variables (session and saver must live until
  // Save). One call per writer: FailedPrecondition for a second.
  Status AddMetaGraphAndVariables(const Scope& scope, const ClientSession& session, const train::Saver& saver,
                                  const std::vector<std::string>& tags,
                                  const std::map<std::string, proto::SignatureDef>& signatures, const Options& options);
  Status AddMetaGraphAndVariables(const Scope& scope, const ClientSession& session, const train::Saver& saver,
                                  const std::vector<std::string>& tags,
                                  const std::map<std::string, proto::SignatureDef>& signatures) {
    return AddMetaGraphAndVariables(scope, session, saver, tags, signatures, Options());
  }
  // Writes the directory: FailedPrecondition when it exists and is not empty.
  Status Save(const std::string& export_dir, bool as_text = false);

 private:
  proto::SavedModel saved_model_;
  const ClientSession* session_ = nullptr;
  train::Saver saver_;
  std::vector<std::pair<std::string, std::string>> assets_;  // (source path, file name)
};

}  // namespace dflow
