// Checkpoints: saving and restoring variables in TensorFlow's V2 checkpoint format — tf.train.Saver.
//
//   Saver saver(root);                       // every variable of the graph (after Minimize: slots too)
//   StatusOr<std::string> path = saver.Save(session, "/tmp/run/model", step);   // "/tmp/run/model-100"
//   ...
//   StatusOr<std::string> latest = train::LatestCheckpoint("/tmp/run");         // "/tmp/run/model-100"
//   Status s = saver.Restore(session, *latest);
//
// A checkpoint "PREFIX" is the files PREFIX.index (a table of tensor names, dtypes, shapes and
// checksums) and PREFIX.data-00000-of-0000N (the bytes); the directory's text file `checkpoint`
// names the latest one and those kept. TensorFlow reads what dflow writes, and dflow reads what
// TensorFlow writes (tf.train.Saver V2, tf.train.Checkpoint's bundle layout).
//
// Durability: each file is written under a temporary name, fsynced and renamed; the state file
// is rewritten (atomically) only after the checkpoint is complete, and old checkpoints are
// deleted only after that. A crash at any moment therefore leaves the checkpoint that the state
// file names readable, as long as each save uses a new prefix (a global step does that). A save
// that fails (a full disk, an I/O error) removes what it wrote and leaves the state file as it
// was. Every read checks sizes and CRC32C checksums: a damaged file is DataLoss naming the file
// and the tensor.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dflow/partitioned_variables.h"
#include "dflow/session.h"
#include "dflow/variable.h"

namespace dflow {
class Env;  // defined inside dflow: files and clock (tests inject faults through it)
}  // namespace dflow

namespace dflow::train {

struct SaverOptions {
  // What to save. All empty: every variable of the scope's graph created so far through the
  // client API (Variable::Create, PartitionedVariable::Create, CreateGlobalStep, optimizer slots
  // and accumulators) — TensorFlow's global variables. Otherwise exactly the listed ones:
  //   var_list: Variable::ref() or read() outputs (or VariableV2 outputs), saved under the
  //             variable's node name; parts of a PartitionedVariable listed here are saved as
  //             slices of the whole, under the whole's name;
  //   partitioned_var_list: saved as slices of the whole, under its name (as TensorFlow does),
  //             so that they can be restored into a different partitioning;
  //   named_vars: saved under the given checkpoint name (to read a checkpoint whose names
  //             differ from the graph's).
  std::vector<Output> var_list;
  std::vector<PartitionedVariable> partitioned_var_list;
  std::map<std::string, Output> named_vars;

  // One SaveV2 per device that holds variables, run on that device (a parameter server writes
  // its own variables; none travel to the chief), then MergeV2Checkpoints into the final prefix.
  // The devices must share a file system. false: one SaveV2 on the scope's device.
  bool sharded = false;
  // How many recent checkpoints Save keeps; older ones are deleted after the state file names
  // the new one. 0 or less: keep all.
  int max_to_keep = 5;
  // Additionally keep one checkpoint every this many hours for good (never deleted).
  double keep_checkpoint_every_n_hours = 10000.0;
  // The name scope of the save/restore ops ("save/", "save_1/" when taken).
  std::string name = "save";
  // Each Save also writes the graph's MetaGraphDef (dflow/meta_graph.h: the graph, this saver's
  // SaverDef, the variable collections) to "PATH.meta", as TensorFlow's Saver does, so that a
  // run can resume from the .meta file alone; deleting an old checkpoint deletes its .meta.
  bool write_meta_graph = true;
  // The files and clock of the state file, of deleting old checkpoints and of removing what a
  // failed save wrote (tests inject faults or a clock here; the save ops themselves write through
  // Env::Default()). Not owned; nullptr is Env::Default() when the Saver is built.
  Env* env = nullptr;
};

// Thread-safe: Save and Restore calls are serialized. Copies share the same saver (the same ops
// and the same list of kept checkpoints).
class Saver {
 public:
  Saver() = default;  // invalid
  // Builds the save and restore ops in `scope`'s graph. Errors (no variables, a duplicate
  // checkpoint name, a variable that is not a VariableV2) are recorded in the scope, and the
  // saver is then invalid.
  explicit Saver(const Scope& scope, const SaverOptions& options = SaverOptions());
  bool valid() const { return impl_ != nullptr; }

  // Writes a checkpoint of the variables as they are in `session` to "prefix-<global_step>" (or
  // "prefix" when global_step < 0) and returns that path. With write_state, then updates the
  // state file `checkpoint` in the prefix's directory (the new checkpoint last, the latest) and
  // deletes the checkpoints that fall out of max_to_keep and are not kept by
  // keep_checkpoint_every_n_hours. Errors: those of the session run (an uninitialized variable
  // is FailedPrecondition), of the file system, FailedPrecondition for an invalid saver.
  // A failed save removes what it wrote, as far as the file system lets it (what it cannot
  // remove is logged): the temporary files and the sharded save's "PATH_temp_<random>" directory
  // — the shards' SaveV2 ops write there on their own tasks, so the tasks must share the file
  // system, as they must for the merge anyway — and, when PATH was no checkpoint before, the
  // files renamed into place, also when only the state file could not be updated. The state file
  // and last_checkpoints() stay as they were, so the next Save is a plain retry. A shard that was
  // still writing when the save failed can leave its temporary directory behind: the next Save
  // removes those of this saver first.
  StatusOr<std::string> Save(const ClientSession& session, const std::string& prefix, int64_t global_step = -1,
                             bool write_state = true);

  // Assigns every saved variable its value from checkpoint `path` (a prefix, as Save returns
  // it). NotFound when the checkpoint or one of the tensors is missing; InvalidArgument for a
  // dtype or shape that does not match the variable; DataLoss for a damaged file.
  Status Restore(const ClientSession& session, const std::string& path) const;

  // The checkpoints this saver keeps (oldest first), as paths.
  std::vector<std::string> last_checkpoints() const;
  // Adopts the checkpoints listed in `dir`'s state file (those whose files exist), so that
  // max_to_keep also counts checkpoints of an earlier run. NotFound when there is no state file.
  Status RecoverLastCheckpoints(const std::string& dir);

  // The names under which the tensors are saved, sorted.
  std::vector<std::string> saved_names() const;
  // The ops, for running them by hand: feed filename() with a prefix, then fetch save_path()
  // (runs the save, yields the prefix) or run restore_op().
  Output filename() const;
  Output save_path() const;
  Operation restore_op() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

// The latest checkpoint named by the state file `latest_filename` in `dir`, as a path (joined
// with dir when relative). NotFound when there is no state file, it names none, or the
// checkpoint's index file is missing; DataLoss when the state file cannot be parsed.
StatusOr<std::string> LatestCheckpoint(const std::string& dir, const std::string& latest_filename = "checkpoint");

// True when PREFIX.index exists.
bool CheckpointExists(const std::string& prefix);

}  // namespace dflow::train
