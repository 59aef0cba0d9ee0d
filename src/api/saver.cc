#include "dflow/saver.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <random>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "api/scope_internal.h"
#include "base/logging.h"
#include "dflow/array_ops.h"
#include "dflow/meta_graph.h"
#include "tensor/tensor_bundle.h"
#include "train/checkpoint_state.h"

namespace dflow::train {

// One tensor the saver writes: a whole variable, or a part of a partitioned one.
struct Saveable {
  std::string name;  // the name in the checkpoint
  std::string spec;  // shape_and_slices: "" for a whole variable, "D0 D1 start,len:-" for a part
  Output var;        // the VariableV2's reference output
};

struct Saver::Impl {
  SaverOptions options;
  std::optional<Scope> scope;  // for the MetaGraphDef written beside each checkpoint
  Env* env = nullptr;
  Output filename, save_path;
  Operation restore_op;
  std::vector<std::string> names;
  mutable std::mutex mu;                                         // serializes Save/Restore and guards what follows
  std::vector<std::pair<std::string, double>> last_checkpoints;  // (path, seconds), oldest first
  double next_keep_time = 0;  // seconds; a checkpoint this old or older is kept when dropped
  double last_preserved = 0;
  // A sharded save writes into "PATH" + temp_suffix ("_temp_<random>", one per Saver); "" when
  // not sharded.
  std::string temp_suffix;

  double Now() const { return static_cast<double>(env->NowMicros()) / 1e6; }
  // Removes what a failed save to `path` wrote: its temporary directory, and the checkpoint's own
  // files when `path` was no checkpoint before the save (else they are that checkpoint's).
  void RemoveFailedSave(const std::string& path, bool existed) const;
  // Removes the temporary directories of this saver's earlier saves in `dir`: a shard's SaveV2
  // that was still writing when its save failed can leave one after RemoveFailedSave.
  void RemoveStaleTempDirs(const std::string& dir) const;
};

namespace {

// The VariableV2 output behind `v`: itself, or the ref input of the Identity that reads it.
StatusOr<Output> VariableRef(const Output& v) {
  if (!v.valid()) return errors::InvalidArgument("Saver: an invalid Output in var_list");
  Node* n = v.node();
  if (n->op() == "Identity" && !n->data_inputs().empty()) {
    const Edge* e = n->data_inputs()[0];
    if (e != nullptr && IsRefType(e->src->output_type(e->src_output))) return Output(e->src, e->src_output);
  }
  if (n->op() != "VariableV2" && n->op() != "Variable") {
    return errors::InvalidArgument("Saver: '", n->name(), "' (", n->op(), ") is not a variable");
  }
  return v;
}

std::string SliceSpec(const TensorShape& full, const std::vector<int64_t>& offset, const TensorShape& part) {
  std::vector<std::string> dims, extents;
  for (int d = 0; d < full.dims(); ++d) {
    dims.push_back(absl::StrCat(full.dim_size(d)));
    extents.push_back(part.dim_size(d) == full.dim_size(d) ? "-" : absl::StrCat(offset[d], ",", part.dim_size(d)));
  }
  return absl::StrCat(absl::StrJoin(dims, " "), " ", absl::StrJoin(extents, ":"));
}

StatusOr<TensorShape> StaticShape(const Output& var) {
  auto s = var.node()->output_shape(var.index()).ToTensorShape();
  if (!s.ok()) return errors::InvalidArgument("Saver: variable '", var.node()->name(), "' has no fully defined shape");
  return s;
}

// The part entry of `var` when it is part of a partitioned variable, else a whole entry.
StatusOr<Saveable> SaveableOf(const Scope& scope, const Output& var) {
  const auto& parts = scope.collections()->partitions;
  auto it = parts.find(var.node());
  if (it == parts.end()) return Saveable{var.node()->name(), "", var};
  ASSIGN_OR_RETURN(TensorShape shape, StaticShape(var));
  return Saveable{it->second.full_name, SliceSpec(it->second.full_shape, it->second.offset, shape), var};
}

StatusOr<std::vector<Saveable>> CollectSaveables(const Scope& scope, const SaverOptions& o) {
  std::vector<Saveable> out;
  const bool all = o.var_list.empty() && o.partitioned_var_list.empty() && o.named_vars.empty();
  if (all) {
    for (const Output& v : scope.collections()->global_variables) {
      ASSIGN_OR_RETURN(Saveable s, SaveableOf(scope, v));
      out.push_back(std::move(s));
    }
  }
  for (const Output& v : o.var_list) {
    ASSIGN_OR_RETURN(Output ref, VariableRef(v));
    ASSIGN_OR_RETURN(Saveable s, SaveableOf(scope, ref));
    out.push_back(std::move(s));
  }
  for (const PartitionedVariable& pv : o.partitioned_var_list) {
    if (!pv.valid()) return errors::InvalidArgument("Saver: an invalid PartitionedVariable in partitioned_var_list");
    for (int i = 0; i < pv.num_partitions(); ++i) {
      Output ref = pv.parts()[i].ref();
      ASSIGN_OR_RETURN(TensorShape shape, StaticShape(ref));
      std::vector<int64_t> offset(pv.shape().dims(), 0);
      offset[pv.axis()] = pv.offset(i);
      out.push_back({pv.name(), SliceSpec(pv.shape(), offset, shape), ref});
    }
  }
  for (const auto& [name, v] : o.named_vars) {
    ASSIGN_OR_RETURN(Output ref, VariableRef(v));
    out.push_back({name, "", ref});
  }
  if (out.empty()) return errors::InvalidArgument("Saver: no variables to save");
  std::set<std::pair<std::string, std::string>> seen;
  std::set<const Node*> vars;
  for (const Saveable& s : out) {
    if (!seen.insert({s.name, s.spec}).second || !vars.insert(s.var.node()).second) {
      return errors::InvalidArgument("Saver: '", s.name, "' ", s.spec.empty() ? "" : absl::StrCat("[", s.spec, "] "),
                                     "is listed twice (variable '", s.var.node()->name(), "')");
    }
  }
  // A name used for a whole tensor cannot also name slices.
  std::set<std::string> whole, sliced;
  for (const Saveable& s : out) (s.spec.empty() ? whole : sliced).insert(s.name);
  for (const std::string& n : whole) {
    if (sliced.count(n)) return errors::InvalidArgument("Saver: '", n, "' names both a variable and partitions");
  }
  return out;
}

Output StringsConst(const Scope& s, const std::string& name, const std::vector<std::string>& v) {
  return ops::Const(
      s.WithOpName(name),
      Input::Initializer(Tensor::FromValues<std::string>(v, TensorShape({static_cast<int64_t>(v.size())})).value()));
}

// SaveV2 of `group` (built in `s`), and the Assigns of its RestoreV2 (each colocated with its
// variable) appended to `assigns`.
Operation AddSaveAndRestore(const Scope& s, const Output& prefix, const Output& restore_prefix,
                            const std::vector<const Saveable*>& group, std::vector<Operation>* assigns) {
  std::vector<std::string> names, specs;
  std::vector<DType> dtypes;
  std::vector<Input> save_inputs;
  for (const Saveable* sv : group) {
    names.push_back(sv->name);
    specs.push_back(sv->spec);
    dtypes.push_back(BaseType(sv->var.dtype()));
  }
  const std::string save_name = s.GetUniqueNameForOp("SaveV2");
  save_inputs.push_back(prefix);
  save_inputs.push_back(StringsConst(s, save_name + "/tensor_names", names));
  save_inputs.push_back(StringsConst(s, save_name + "/shape_and_slices", specs));
  for (const Saveable* sv : group) save_inputs.push_back(sv->var);
  Operation save = ops::BuildOp(s.WithOpName(save_name), "SaveV2", save_inputs, {{"dtypes", dtypes}});
  const std::string restore_name = s.GetUniqueNameForOp("RestoreV2");
  Operation restore = ops::BuildOp(s.WithOpName(restore_name), "RestoreV2",
                                   {restore_prefix, StringsConst(s, restore_name + "/tensor_names", names),
                                    StringsConst(s, restore_name + "/shape_and_slices", specs)},
                                   {{"dtypes", dtypes}});
  if (!restore.node()) return save;
  for (size_t i = 0; i < group.size(); ++i) {
    Scope at_var = ScopeAccess::ColocatedWith(s, group[i]->var.node());
    Output a = ops::Assign(at_var.WithOpName(at_var.GetUniqueNameForOp("Assign")), group[i]->var,
                           Output(restore.node(), static_cast<int>(i)));
    if (a.valid()) assigns->push_back(a.op());
  }
  return save;
}

std::string RandomHex() {
  std::random_device rd;
  return absl::StrFormat("%08x%08x", rd(), rd());
}

// Keeps the first error that is not NotFound (what is gone need not be removed).
void KeepFirstError(Status* first, const Status& s) {
  if (first->ok() && !s.ok() && !absl::IsNotFound(s)) *first = s;
}

// Removes directory `dir` and its entries (files, and empty directories: a save writes no deeper).
Status RemoveDirAndFiles(Env* env, const std::string& dir) {
  StatusOr<std::vector<std::string>> children = env->GetChildren(dir);
  if (absl::IsNotFound(children.status())) return absl::OkStatus();
  RETURN_IF_ERROR(children.status());
  Status first;
  for (const std::string& c : *children) {
    const std::string p = JoinPath(dir, c);
    KeepFirstError(&first, env->IsDirectory(p) ? env->DeleteDir(p) : env->DeleteFile(p));
  }
  KeepFirstError(&first, env->DeleteDir(dir));
  return first;
}

}  // namespace

void Saver::Impl::RemoveFailedSave(const std::string& path, bool existed) const {
  Status first;
  if (!temp_suffix.empty()) KeepFirstError(&first, RemoveDirAndFiles(env, path + temp_suffix));
  if (!existed) KeepFirstError(&first, DeleteBundle(env, path));
  // Its MetaGraphDef (written through Env::Default(), as WriteMetaGraph writes it).
  if (!existed && Env::Default()->FileExists(path + ".meta")) {
    KeepFirstError(&first, Env::Default()->DeleteFile(path + ".meta"));
  }
  if (!first.ok()) LOG(WARNING) << "Cannot remove every file of the failed save of " << path << ": " << first;
}

void Saver::Impl::RemoveStaleTempDirs(const std::string& dir) const {
  if (temp_suffix.empty()) return;
  StatusOr<std::vector<std::string>> children = env->GetChildren(dir);
  if (!children.ok()) return;  // no directory yet: nothing to remove
  for (const std::string& c : *children) {
    const std::string p = JoinPath(dir, c);
    if (!absl::EndsWith(c, temp_suffix) || !env->IsDirectory(p)) continue;
    Status s = RemoveDirAndFiles(env, p);
    if (s.ok()) {
      LOG(WARNING) << "Removed " << p << ", left by an earlier failed save";
    } else {
      LOG(WARNING) << "Cannot remove " << p << ", left by an earlier failed save: " << s;
    }
  }
}

Saver::Saver(const Scope& scope, const SaverOptions& options) {
  if (!scope.ok()) return;
  auto saveables = CollectSaveables(scope, options);
  if (!saveables.ok()) {
    scope.UpdateStatus(saveables.status());
    return;
  }
  auto impl = std::make_shared<Impl>();
  impl->options = options;
  if (options.write_meta_graph) impl->scope = scope;
  impl->env = options.env != nullptr ? options.env : Env::Default();
  impl->next_keep_time = impl->Now() + options.keep_checkpoint_every_n_hours * 3600;
  Scope s = scope.NewSubScope(options.name.empty() ? "save" : options.name);
  Scope plain = ScopeAccess::WithoutControlDependencies(s);
  impl->filename = ops::Const(plain.WithOpName("Const"), Input::Initializer(std::string("model")));
  std::vector<Operation> assigns;
  if (!options.sharded) {
    std::vector<const Saveable*> all;
    for (const Saveable& sv : *saveables) all.push_back(&sv);
    Operation save = AddSaveAndRestore(plain, impl->filename, impl->filename, all, &assigns);
    impl->save_path = ops::Identity(plain.WithOpName("control_dependency").WithControlDependencies({save}),
                                    impl->filename);
  } else {
    // One SaveV2 per device, on that device, into "<prefix>_temp_<random>/part-i-of-n"; then a
    // merge into the prefix, where the filename is fed.
    std::map<std::string, std::vector<const Saveable*>> by_device;
    for (const Saveable& sv : *saveables) by_device[sv.var.node()->requested_device()].push_back(&sv);
    const int n = static_cast<int>(by_device.size());
    impl->temp_suffix = "_temp_" + RandomHex();
    Output tmp(ops::BuildOp(plain.WithOpName("StringJoin"), "StringJoin",
                            {impl->filename, ops::Const(plain.WithOpName("StringJoin/inputs_1"),
                                                        Input::Initializer(impl->temp_suffix + "/part"))},
                            {{"separator", std::string()}})
                   .node(),
               0);
    Output num = ops::Const(plain.WithOpName("num_shards"), Input::Initializer(int32_t{n}));
    std::vector<Input> shard_paths;
    int i = 0;
    for (const auto& [device, group] : by_device) {
      Scope d = ScopeAccess::ColocatedWith(plain, group[0]->var.node());
      Output index = ops::Const(d.WithOpName(d.GetUniqueNameForOp("ShardedFilename/shard")),
                                Input::Initializer(int32_t{i++}));
      Output shard(ops::BuildOp(d.WithOpName(d.GetUniqueNameForOp("ShardedFilename")), "ShardedFilename",
                                {tmp, index, num})
                       .node(),
                   0);
      Operation save = AddSaveAndRestore(d, shard, impl->filename, group, &assigns);
      shard_paths.push_back(ops::Identity(
          d.WithOpName(d.GetUniqueNameForOp("control_dependency")).WithControlDependencies({save}), shard));
    }
    Output prefixes = ops::Stack(plain.WithOpName("MergeV2Checkpoints/checkpoint_prefixes"), shard_paths);
    Operation merge = ops::BuildOp(plain.WithOpName("MergeV2Checkpoints"), "MergeV2Checkpoints",
                                   {prefixes, impl->filename}, {{"delete_old_dirs", true}});
    impl->save_path = ops::Identity(plain.WithOpName("Identity").WithControlDependencies({merge}), impl->filename);
  }
  impl->restore_op = ops::Group(plain.WithOpName("restore_all"), assigns);
  if (!scope.ok()) return;
  for (const Saveable& sv : *saveables) impl->names.push_back(sv.name);
  std::sort(impl->names.begin(), impl->names.end());
  impl->names.erase(std::unique(impl->names.begin(), impl->names.end()), impl->names.end());
  impl_ = std::move(impl);
}

Output Saver::filename() const { return impl_ ? impl_->filename : Output(); }
Output Saver::save_path() const { return impl_ ? impl_->save_path : Output(); }
Operation Saver::restore_op() const { return impl_ ? impl_->restore_op : Operation(); }
std::vector<std::string> Saver::saved_names() const { return impl_ ? impl_->names : std::vector<std::string>(); }

std::vector<std::string> Saver::last_checkpoints() const {
  std::vector<std::string> out;
  if (!impl_) return out;
  std::lock_guard<std::mutex> l(impl_->mu);
  for (const auto& [p, t] : impl_->last_checkpoints) out.push_back(p);
  return out;
}

StatusOr<std::string> Saver::Save(const ClientSession& session, const std::string& prefix, int64_t global_step,
                                  bool write_state) {
  if (!impl_) return errors::FailedPrecondition("Save with an invalid Saver");
  if (prefix.empty()) return errors::InvalidArgument("Saver::Save: empty checkpoint prefix");
  Impl& im = *impl_;
  std::lock_guard<std::mutex> l(im.mu);
  const std::string path = global_step >= 0 ? absl::StrCat(prefix, "-", global_step) : prefix;
  const std::string dir = DirName(path);
  im.RemoveStaleTempDirs(dir);
  const bool existed = im.env->FileExists(BundleIndexFilename(path));
  if (Status s = session.Run({{im.filename, Input::Initializer(Tensor(path))}}, {im.save_path}).status(); !s.ok()) {
    im.RemoveFailedSave(path, existed);
    return s;
  }
  if (!im.temp_suffix.empty()) {
    // The merge deletes its sources' files and directory but ignores failures: a leftover goes now.
    if (Status s = RemoveDirAndFiles(im.env, path + im.temp_suffix); !s.ok()) {
      LOG(WARNING) << "Cannot remove the temporary directory " << path << im.temp_suffix << ": " << s;
    }
  }
  if (im.scope.has_value()) {
    // The MetaGraphDef beside the checkpoint ("PATH.meta"), as TensorFlow's Saver writes it.
    StatusOr<proto::MetaGraphDef> meta = ExportMetaGraph(*im.scope, this);
    Status s = meta.ok() ? WriteMetaGraph(*meta, path + ".meta") : meta.status();
    if (!s.ok()) {
      im.RemoveFailedSave(path, existed);
      return errors::Annotate(s, absl::StrCat("Writing ", path, ".meta: "));
    }
  }
  if (!write_state) return path;

  // Record it (latest last), drop what falls out of max_to_keep, write the state, then delete.
  // A failed state update takes the record back and removes the new checkpoint: the next save
  // starts from the same list, and no checkpoint is left that the state file does not name.
  const auto kept_before = im.last_checkpoints;
  const double next_keep_before = im.next_keep_time, preserved_before = im.last_preserved;
  auto& list = im.last_checkpoints;
  list.erase(std::remove_if(list.begin(), list.end(), [&](const auto& e) { return e.first == path; }), list.end());
  list.emplace_back(path, im.Now());
  std::vector<std::pair<std::string, double>> dropped;
  while (im.options.max_to_keep > 0 && static_cast<int>(list.size()) > im.options.max_to_keep) {
    dropped.push_back(list.front());
    list.erase(list.begin());
  }
  std::vector<std::string> to_delete;
  for (const auto& [p, t] : dropped) {
    if (im.options.keep_checkpoint_every_n_hours > 0 && t >= im.next_keep_time) {
      im.next_keep_time += im.options.keep_checkpoint_every_n_hours * 3600;
      im.last_preserved = t;
      continue;  // kept for good: no longer listed, never deleted
    }
    to_delete.push_back(p);
  }
  proto::CheckpointState state;
  state.set_model_checkpoint_path(path);
  for (const auto& [p, t] : list) {
    state.add_all_model_checkpoint_paths(p);
    state.add_all_model_checkpoint_timestamps(t);
  }
  state.set_last_preserved_timestamp(im.last_preserved);
  if (Status s = WriteCheckpointState(im.env, dir, state); !s.ok()) {
    StatusOr<proto::CheckpointState> on_disk = ReadCheckpointState(im.env, dir);
    if (!on_disk.ok() || on_disk->model_checkpoint_path() != path) {
      im.last_checkpoints = kept_before;
      im.next_keep_time = next_keep_before;
      im.last_preserved = preserved_before;
      im.RemoveFailedSave(path, existed);
      return s;
    }
    // The new state file is in place; only syncing its directory failed (as Env::WriteFileAtomic,
    // that does not fail the write).
    LOG(WARNING) << "The checkpoint state file in " << dir << " names " << path << ", but: " << s;
  }
  for (const std::string& p : to_delete) {
    if (p == path) continue;
    if (Status s = DeleteBundle(im.env, p); !s.ok()) {
      LOG(WARNING) << "Cannot delete old checkpoint " << p << ": " << s;
    }
    // Its MetaGraphDef, where one was written beside it (TensorFlow deletes "PREFIX.meta" too).
    if (im.env->FileExists(p + ".meta")) (void)im.env->DeleteFile(p + ".meta");
  }
  return path;
}

Status Saver::Restore(const ClientSession& session, const std::string& path) const {
  if (!impl_) return errors::FailedPrecondition("Restore with an invalid Saver");
  if (!impl_->env->FileExists(BundleIndexFilename(path))) {
    return errors::NotFound("The passed save_path is not a valid checkpoint: ", path);
  }
  std::lock_guard<std::mutex> l(impl_->mu);
  return session.Run({{impl_->filename, Input::Initializer(Tensor(path))}}, {}, {impl_->restore_op}).status();
}

Status Saver::RecoverLastCheckpoints(const std::string& dir) {
  if (!impl_) return errors::FailedPrecondition("RecoverLastCheckpoints with an invalid Saver");
  ASSIGN_OR_RETURN(proto::CheckpointState state, ReadCheckpointState(impl_->env, dir));
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->last_checkpoints.clear();
  const bool timed = state.all_model_checkpoint_timestamps_size() == state.all_model_checkpoint_paths_size();
  for (int i = 0; i < state.all_model_checkpoint_paths_size(); ++i) {
    const std::string& p = state.all_model_checkpoint_paths(i);
    if (!impl_->env->FileExists(BundleIndexFilename(p))) continue;
    impl_->last_checkpoints.emplace_back(p, timed ? state.all_model_checkpoint_timestamps(i) : impl_->Now());
  }
  impl_->last_preserved = state.last_preserved_timestamp();
  return absl::OkStatus();
}

StatusOr<std::string> LatestCheckpoint(const std::string& dir, const std::string& latest_filename) {
  ASSIGN_OR_RETURN(proto::CheckpointState state, ReadCheckpointState(Env::Default(), dir, latest_filename));
  const std::string& p = state.model_checkpoint_path();
  if (p.empty()) return errors::NotFound("The checkpoint state file in ", dir, " names no checkpoint");
  if (!CheckpointExists(p)) {
    return errors::NotFound("The latest checkpoint ", p, " named in ", JoinPath(dir, latest_filename),
                            " does not exist");
  }
  return p;
}

bool CheckpointExists(const std::string& prefix) { return Env::Default()->FileExists(BundleIndexFilename(prefix)); }

}  // namespace dflow::train
