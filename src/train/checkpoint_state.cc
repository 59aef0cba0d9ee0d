#include "train/checkpoint_state.h"

#include "absl/strings/match.h"
#include "google/protobuf/text_format.h"

namespace dflow::train {
namespace {

// `path` relative to `dir` when it lies directly in it.
std::string RelativeTo(const std::string& dir, const std::string& path) {
  return DirName(path) == dir ? BaseName(path) : path;
}

std::string Absolute(const std::string& dir, const std::string& path) {
  return absl::StartsWith(path, "/") || path.empty() ? path : JoinPath(dir, path);
}

}  // namespace

StatusOr<proto::CheckpointState> ReadCheckpointState(Env* env, const std::string& dir,
                                                     const std::string& latest_filename) {
  const std::string path = JoinPath(dir, latest_filename);
  ASSIGN_OR_RETURN(std::string text, env->ReadFile(path, int64_t{64} << 20));
  proto::CheckpointState state;
  if (!google::protobuf::TextFormat::ParseFromString(text, &state)) {
    return errors::DataLoss("Cannot parse the checkpoint state file ", path, " (CheckpointState text format)");
  }
  state.set_model_checkpoint_path(Absolute(dir, state.model_checkpoint_path()));
  for (std::string& p : *state.mutable_all_model_checkpoint_paths()) p = Absolute(dir, p);
  return state;
}

Status WriteCheckpointState(Env* env, const std::string& dir, const proto::CheckpointState& state,
                            const std::string& latest_filename) {
  proto::CheckpointState rel = state;
  rel.set_model_checkpoint_path(RelativeTo(dir, state.model_checkpoint_path()));
  for (std::string& p : *rel.mutable_all_model_checkpoint_paths()) p = RelativeTo(dir, p);
  std::string text;
  if (!google::protobuf::TextFormat::PrintToString(rel, &text)) {
    return errors::Internal("Cannot print the checkpoint state");
  }
  // Env::WriteFileAtomic goes through env's virtual file calls, so a FaultInjectionEnv sees every step.
  return env->WriteFileAtomic(JoinPath(dir, latest_filename), text);
}

}  // namespace dflow::train
