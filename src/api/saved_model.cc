#include "dflow/saved_model.h"

#include <atomic>

#include <google/protobuf/text_format.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/env.h"
#include "graph/graph.h"

namespace dflow {
namespace {

constexpr char kPb[] = "saved_model.pb";
constexpr char kPbtxt[] = "saved_model.pbtxt";

std::string TagSetText(const google::protobuf::RepeatedPtrField<std::string>& tags) {
  return absl::StrCat("[", absl::StrJoin(tags, ", "), "]");
}

template <typename Map>
std::string KeysOf(const Map& m) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : m) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  return absl::StrCat("[", absl::StrJoin(keys, ", "), "]");
}

// The op to run after the restore: main op, legacy init op or init-op signature ("" none).
StatusOr<std::string> InitOpName(const proto::MetaGraphDef& m) {
  for (const char* key : {kSavedModelMainOpKey, kSavedModelLegacyInitOpKey}) {
    auto it = m.collection_def().find(key);
    if (it == m.collection_def().end()) continue;
    if (it->second.node_list().value_size() != 1) {
      return errors::FailedPrecondition("Expected exactly one SavedModel main op in collection ", key, ", found ",
                                        it->second.node_list().value_size());
    }
    return it->second.node_list().value(0);
  }
  auto sig = m.signature_def().find(kSavedModelInitOpSignatureKey);
  if (sig != m.signature_def().end()) {
    auto out = sig->second.outputs().find(kSavedModelInitOpSignatureKey);
    if (out != sig->second.outputs().end()) {
      std::string name = out->second.name();
      if (size_t colon = name.rfind(':'); colon != std::string::npos) name.resize(colon);
      return name;
    }
  }
  return std::string();
}

// {asset tensor name: its file's path in export_dir/assets} from asset_file_def and the
// saved_model_assets collection (Any-packed AssetFileDefs, as TensorFlow 1.x's builder writes).
std::vector<std::pair<std::string, Tensor>> AssetFeeds(const proto::MetaGraphDef& m, const std::string& dir) {
  std::vector<proto::AssetFileDef> assets(m.asset_file_def().begin(), m.asset_file_def().end());
  auto it = m.collection_def().find(kSavedModelAssetsKey);
  if (it != m.collection_def().end()) {
    for (const auto& any : it->second.any_list().value()) {
      proto::AssetFileDef a;
      if (a.ParseFromString(any.value())) assets.push_back(a);
    }
  }
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& a : assets) {
    feeds.emplace_back(a.tensor_info().name(), Tensor(JoinPath(JoinPath(dir, "assets"), a.filename())));
  }
  return feeds;
}

}  // namespace

bool MaybeSavedModelDirectory(const std::string& dir) {
  Env* env = Env::Default();
  return env->FileExists(JoinPath(dir, kPb)) || env->FileExists(JoinPath(dir, kPbtxt));
}

StatusOr<proto::SavedModel> ReadSavedModel(const std::string& dir) {
  Env* env = Env::Default();
  proto::SavedModel sm;
  const std::string pb = JoinPath(dir, kPb), txt = JoinPath(dir, kPbtxt);
  if (env->FileExists(pb)) {
    ASSIGN_OR_RETURN(std::string bytes, env->ReadFile(pb));
    if (!sm.ParseFromString(bytes)) {
      return errors::InvalidArgument("Could not parse ", bytes.size(), " bytes of ", pb, " as a SavedModel");
    }
    return sm;
  }
  if (env->FileExists(txt)) {
    ASSIGN_OR_RETURN(std::string text, env->ReadFile(txt));
    if (!google::protobuf::TextFormat::ParseFromString(text, &sm)) {
      return errors::InvalidArgument("Could not parse ", txt, " as a SavedModel in text format");
    }
    return sm;
  }
  return errors::NotFound("SavedModel not found in export directory: ", dir, " (no ", kPb, " or ", kPbtxt, ")");
}

StatusOr<SavedModelBundle> LoadSavedModel(const SessionOptions& session_options, const RunOptions& run_options,
                                          const std::string& export_dir, const std::set<std::string>& tags) {
  ASSIGN_OR_RETURN(proto::SavedModel sm, ReadSavedModel(export_dir));
  const proto::MetaGraphDef* found = nullptr;
  std::vector<std::string> present;
  for (const auto& m : sm.meta_graphs()) {
    std::set<std::string> have(m.meta_info_def().tags().begin(), m.meta_info_def().tags().end());
    if (have == tags) found = &m;
    present.push_back(TagSetText(m.meta_info_def().tags()));
  }
  if (found == nullptr) {
    return errors::NotFound("Could not find meta graph def matching supplied tags: { ", absl::StrJoin(tags, " "),
                            " } in SavedModel ", export_dir,
                            "; the tag sets present: ", present.empty() ? "none" : absl::StrJoin(present, ", "));
  }
  SavedModelBundle bundle;
  bundle.meta_graph = *found;
  for (const auto& [k, v] : found->signature_def()) bundle.signatures[k] = v;
  // The bundle's variables in a container of their own (unless the options name one), so that
  // two bundles, or a bundle and another graph, never share variables by name.
  SessionOptions options = session_options;
  if (options.default_container.empty()) {
    static std::atomic<int64_t> next{0};
    options.default_container = absl::StrCat("saved_model_", next.fetch_add(1));
  }
  ASSIGN_OR_RETURN(bundle.session, NewSession(options));
  Session* session = bundle.session.get();
  RETURN_IF_ERROR(errors::Annotate(session->Create(found->graph_def()), export_dir + ": "));
  std::vector<Tensor> unused;
  const std::string variables = JoinPath(JoinPath(export_dir, "variables"), "variables");
  if (found->has_saver_def() && !found->saver_def().restore_op_name().empty() &&
      Env::Default()->FileExists(variables + ".index")) {
    const proto::SaverDef& sd = found->saver_def();
    RETURN_IF_ERROR(errors::Annotate(session->Run(run_options, {{sd.filename_tensor_name(), Tensor(variables)}}, {},
                                                  {sd.restore_op_name()}, &unused, nullptr),
                                     "Restoring the variables of the SavedModel: "));
  }
  ASSIGN_OR_RETURN(std::string init_op, InitOpName(*found));
  if (!init_op.empty()) {
    RETURN_IF_ERROR(errors::Annotate(session->Run(run_options, AssetFeeds(*found, export_dir), {}, {init_op}, &unused,
                                                  nullptr),
                                     absl::StrCat("Running the SavedModel's main op ", init_op, ": ")));
  }
  return bundle;
}

StatusOr<std::vector<Tensor>> RunSignature(const SavedModelBundle& bundle, const std::string& key,
                                           const std::vector<std::pair<std::string, Tensor>>& inputs,
                                           const std::vector<std::string>& output_keys,
                                           std::vector<std::string>* output_keys_out) {
  auto it = bundle.signatures.find(key);
  if (it == bundle.signatures.end()) {
    return errors::NotFound("The SavedModel has no signature '", key, "'; its signatures: ", KeysOf(bundle.signatures));
  }
  const proto::SignatureDef& sig = it->second;
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& [k, t] : inputs) {
    auto in = sig.inputs().find(k);
    if (in == sig.inputs().end()) {
      return errors::NotFound("Signature '", key, "' has no input '", k, "'; its inputs: ", KeysOf(sig.inputs()));
    }
    if (in->second.encoding_case() != proto::TensorInfo::kName) {
      return errors::Unimplemented("Input '", k, "' of signature '", key, "' is a sparse or composite tensor");
    }
    feeds.emplace_back(in->second.name(), t);
  }
  std::vector<std::string> keys = output_keys;
  if (keys.empty()) {
    for (const auto& [k, v] : sig.outputs()) keys.push_back(k);
    std::sort(keys.begin(), keys.end());
  }
  std::vector<std::string> names;
  for (const std::string& k : keys) {
    auto out = sig.outputs().find(k);
    if (out == sig.outputs().end()) {
      return errors::NotFound("Signature '", key, "' has no output '", k, "'; its outputs: ", KeysOf(sig.outputs()));
    }
    if (out->second.encoding_case() != proto::TensorInfo::kName) {
      return errors::Unimplemented("Output '", k, "' of signature '", key, "' is a sparse or composite tensor");
    }
    names.push_back(out->second.name());
  }
  std::vector<Tensor> outputs;
  RETURN_IF_ERROR(bundle.session->Run(feeds, names, {}, &outputs));
  if (output_keys_out != nullptr) *output_keys_out = keys;
  return outputs;
}

proto::TensorInfo BuildTensorInfo(const Output& output) {
  proto::TensorInfo info;
  info.set_name(output.name());
  info.set_dtype(static_cast<proto::DataType>(BaseType(output.dtype())));
  PartialTensorShape shape = output.shape();
  if (shape.unknown_rank()) {
    info.mutable_tensor_shape()->set_unknown_rank(true);
  } else {
    for (int i = 0; i < shape.dims(); ++i) info.mutable_tensor_shape()->add_dim()->set_size(shape.dim_size(i));
  }
  return info;
}

proto::SignatureDef BuildSignatureDef(const std::map<std::string, Output>& inputs,
                                      const std::map<std::string, Output>& outputs, const std::string& method_name) {
  proto::SignatureDef s;
  for (const auto& [k, o] : inputs) (*s.mutable_inputs())[k] = BuildTensorInfo(o);
  for (const auto& [k, o] : outputs) (*s.mutable_outputs())[k] = BuildTensorInfo(o);
  s.set_method_name(method_name);
  return s;
}

Status SavedModelWriter::AddMetaGraphAndVariables(const Scope& scope, const ClientSession& session,
                                                  const train::Saver& saver, const std::vector<std::string>& tags,
                                                  const std::map<std::string, proto::SignatureDef>& signatures,
                                                  const Options& options) {
  if (session_ != nullptr) {
    return errors::FailedPrecondition("Graph state including variables has already been added to this "
                                      "SavedModelWriter");
  }
  if (!saver.valid()) return errors::InvalidArgument("SavedModelWriter: the Saver is not valid");
  if (options.asset_files.size() != options.asset_tensors.size()) {
    return errors::InvalidArgument("SavedModelWriter: ", options.asset_files.size(), " asset files but ",
                                   options.asset_tensors.size(), " asset tensors");
  }
  train::ExportMetaGraphOptions mo;
  mo.tags = tags;
  mo.clear_devices = options.clear_devices;
  if (!options.main_op.empty()) mo.collections[kSavedModelMainOpKey] = {options.main_op};
  ASSIGN_OR_RETURN(proto::MetaGraphDef m, train::ExportMetaGraph(scope, &saver, mo));
  proto::CollectionDef assets;
  for (size_t i = 0; i < options.asset_files.size(); ++i) {
    proto::AssetFileDef a;
    a.set_filename(std::string(BaseName(options.asset_files[i])));
    a.mutable_tensor_info()->set_name(options.asset_tensors[i]);
    proto::Any* any = assets.mutable_any_list()->add_value();
    any->set_type_url("type.googleapis.com/tensorflow.AssetFileDef");
    any->set_value(a.SerializeAsString());
    assets_.emplace_back(options.asset_files[i], a.filename());
  }
  if (!options.asset_files.empty()) (*m.mutable_collection_def())[kSavedModelAssetsKey] = assets;
  for (const auto& [k, s] : signatures) (*m.mutable_signature_def())[k] = s;
  *saved_model_.add_meta_graphs() = std::move(m);
  saved_model_.set_saved_model_schema_version(1);
  session_ = &session;
  saver_ = saver;
  return absl::OkStatus();
}

Status SavedModelWriter::Save(const std::string& export_dir, bool as_text) {
  if (session_ == nullptr) return errors::FailedPrecondition("SavedModelWriter: nothing added to save");
  Env* env = Env::Default();
  if (env->IsDirectory(export_dir)) {
    ASSIGN_OR_RETURN(std::vector<std::string> children, env->GetChildren(export_dir));
    if (!children.empty()) {
      return errors::FailedPrecondition("Export directory already exists, and isn't empty: ", export_dir);
    }
  }
  RETURN_IF_ERROR(env->CreateDirs(JoinPath(export_dir, "variables")));
  RETURN_IF_ERROR(saver_
                      .Save(*session_, JoinPath(JoinPath(export_dir, "variables"), "variables"), -1,
                            /*write_state=*/false)
                      .status());
  // A SavedModel's variables directory holds the checkpoint only (a Saver that writes .meta files
  // wrote one beside it).
  const std::string stray_meta = JoinPath(JoinPath(export_dir, "variables"), "variables.meta");
  if (env->FileExists(stray_meta)) RETURN_IF_ERROR(env->DeleteFile(stray_meta));
  for (const auto& [src, name] : assets_) {
    RETURN_IF_ERROR(env->CreateDirs(JoinPath(export_dir, "assets")));
    ASSIGN_OR_RETURN(std::string bytes, env->ReadFile(src));
    RETURN_IF_ERROR(env->WriteFileAtomic(JoinPath(JoinPath(export_dir, "assets"), name), bytes));
  }
  std::string bytes;
  if (as_text) {
    if (!google::protobuf::TextFormat::PrintToString(saved_model_, &bytes)) {
      return errors::Internal("Cannot print the SavedModel as text");
    }
  } else if (!saved_model_.SerializeToString(&bytes)) {
    return errors::Internal("Cannot serialize the SavedModel");
  }
  return env->WriteFileAtomic(JoinPath(export_dir, as_text ? kPbtxt : kPb), bytes);
}

}  // namespace dflow
