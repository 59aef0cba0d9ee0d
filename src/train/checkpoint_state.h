// The `checkpoint` state file of a checkpoint directory: TensorFlow's CheckpointState in protobuf
// text format, naming the latest checkpoint and those a Saver keeps.
//
//   model_checkpoint_path: "model-200"
//   all_model_checkpoint_paths: "model-100"
//   all_model_checkpoint_paths: "model-200"
//   all_model_checkpoint_timestamps: 1700000000.5
//   ...
//
// Paths inside the directory are written relative to it (TensorFlow reads both forms).
#pragma once

#include <string>

#include "base/env.h"
#include "base/status.h"
#include "proto/checkpoint_state.pb.h"

namespace dflow::train {

// Reads dir/latest_filename. NotFound when it does not exist; DataLoss when it cannot be parsed.
// Relative paths in it are returned joined with `dir`.
StatusOr<proto::CheckpointState> ReadCheckpointState(Env* env, const std::string& dir,
                                                     const std::string& latest_filename = "checkpoint");

// Writes dir/latest_filename atomically through `env`: a temporary file, fsync, rename, fsync of
// the directory. Paths under `dir` are stored relative to it. A failure leaves the previous
// state file as it was.
Status WriteCheckpointState(Env* env, const std::string& dir, const proto::CheckpointState& state,
                            const std::string& latest_filename = "checkpoint");

}  // namespace dflow::train
