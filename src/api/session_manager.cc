// The Scaffold and the session creators of dflow/monitored_session.h: how a chief makes the model
// ready (restore or initialize) and how other workers wait for it.
#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/logging.h"
#include "api/scope_internal.h"
#include "dflow/lookup_ops.h"
#include "graph/graph.h"
#include "dflow/monitored_session.h"
#include "dflow/summary.h"
#include "dflow/variable.h"
#include "train/checkpoint_state.h"

namespace dflow::train {
namespace {

// The variables the ready op reports as uninitialized.
StatusOr<std::vector<std::string>> Uninitialized(const ClientSession& session, const Output& ready_op) {
  if (!ready_op.valid()) return std::vector<std::string>();
  ASSIGN_OR_RETURN(std::vector<Tensor> r, session.Run({ready_op}));
  if (r[0].dtype() != DT_STRING) {
    return errors::InvalidArgument("The ready op ", ready_op.name(), " must return strings, not ",
                                   DTypeString(r[0].dtype()));
  }
  std::vector<std::string> names;
  for (int64_t i = 0; i < r[0].NumElements(); ++i) names.push_back(r[0].data<std::string>()[i]);
  return names;
}

// "a, b, c and 7 more": a log line stays readable with thousands of variables.
std::string NameList(const std::vector<std::string>& names) {
  constexpr size_t kShown = 10;
  std::string s = absl::StrJoin(names.begin(), names.begin() + std::min(names.size(), kShown), ", ");
  if (names.size() > kShown) absl::StrAppend(&s, " and ", names.size() - kShown, " more");
  return s;
}

Status RunLocalInit(const ClientSession& session, const Scaffold& scaffold) {
  if (!scaffold.local_init_op.valid()) return absl::OkStatus();
  return session.Run({scaffold.local_init_op});
}

// Restores the newest of the checkpoints recorded in `dir` that restores without DataLoss (a
// damaged one is logged and the one before it tried) and returns its path; "" when none is
// recorded. Any other error is the model's, not the files': it is returned at once.
StatusOr<std::string> RestoreNewestGoodCheckpoint(const ClientSession& session, SaverInterface& saver,
                                                  const std::string& dir) {
  ASSIGN_OR_RETURN(std::vector<std::string> checkpoints, saver.Checkpoints(dir));
  std::vector<std::string> damaged;
  for (const std::string& checkpoint : checkpoints) {
    Status s = saver.Restore(session, checkpoint);
    if (s.ok()) return checkpoint;
    if (!absl::IsDataLoss(s)) return errors::Annotate(s, absl::StrCat("Restoring the checkpoint ", checkpoint, ": "));
    LOG(WARNING) << "The checkpoint " << checkpoint << " is damaged and is skipped (" << s << ")"
                 << (&checkpoint != &checkpoints.back() ? "; trying the one before it" : "");
    damaged.push_back(absl::StrCat(checkpoint, " (", s.message(), ")"));
  }
  if (damaged.empty()) return std::string();
  return errors::DataLoss("No checkpoint recorded in ", dir,
                          " can be restored; each is damaged: ", absl::StrJoin(damaged, "; "));
}

class SaverAdapter : public SaverInterface {
 public:
  explicit SaverAdapter(Saver saver) : saver_(std::move(saver)) {}
  StatusOr<std::string> Save(const ClientSession& session, const std::string& prefix, int64_t step) override {
    if (!recovered_) {
      recovered_ = true;
      saver_.RecoverLastCheckpoints(DirName(prefix)).IgnoreError();  // NotFound: a first run
    }
    return saver_.Save(session, prefix, step);
  }
  Status Restore(const ClientSession& session, const std::string& path) override {
    if (!CheckpointExists(path)) {
      // The state file recorded it: its index file was lost (a checkpoint is complete before it
      // is recorded, and deleted only after it is no longer recorded).
      return errors::DataLoss("The checkpoint ", path, " has no index file ", path, ".index");
    }
    return saver_.Restore(session, path);
  }
  StatusOr<std::string> LatestCheckpoint(const std::string& dir) override {
    StatusOr<std::string> latest = ::dflow::train::LatestCheckpoint(dir);
    if (absl::IsNotFound(latest.status())) return std::string();
    return latest;
  }
  StatusOr<std::vector<std::string>> Checkpoints(const std::string& dir) override {
    StatusOr<proto::CheckpointState> state = ReadCheckpointState(Env::Default(), dir);
    if (absl::IsNotFound(state.status())) return std::vector<std::string>();
    RETURN_IF_ERROR(state.status());
    std::vector<std::string> newest_first;
    auto add = [&](const std::string& p) {
      if (!p.empty() && std::find(newest_first.begin(), newest_first.end(), p) == newest_first.end()) {
        newest_first.push_back(p);
      }
    };
    add(state->model_checkpoint_path());
    for (int i = state->all_model_checkpoint_paths_size() - 1; i >= 0; --i) add(state->all_model_checkpoint_paths(i));
    return newest_first;
  }

 private:
  Saver saver_;
  bool recovered_ = false;
};

}  // namespace

std::shared_ptr<SaverInterface> NewSaver(Saver saver) { return std::make_shared<SaverAdapter>(std::move(saver)); }

StatusOr<std::vector<std::string>> SaverInterface::Checkpoints(const std::string& dir) {
  ASSIGN_OR_RETURN(std::string latest, LatestCheckpoint(dir));
  if (latest.empty()) return std::vector<std::string>();
  return std::vector<std::string>{latest};
}

Status Scaffold::Finalize(const Scope& scope) {
  if (finalized_) return absl::OkStatus();
  RETURN_IF_ERROR(scope.status());
  if (!init_op.valid()) init_op = GlobalVariablesInitializer(scope);
  const std::vector<Output> model = scope.collections()->global_variables;
  if (!ready_op.valid()) {
    if (model.empty()) {  // (an empty list would mean every variable)
      ready_op = ops::Const(scope.WithOpName("report_uninitialized_variables"),
                            Tensor::FromValues<std::string>({}, TensorShape({0})).value());
    } else {
      ready_op = ReportUninitializedVariables(scope, model);
    }
  }
  if (!local_init_op.valid() && !TableInitializers(scope).empty()) {  // TensorFlow's default: tables too
    std::vector<Operation> parts = TableInitializers(scope);
    if (!LocalVariables(scope).empty()) parts.push_back(LocalVariablesInitializer(scope));
    local_init_op = ops::Group(scope.WithOpName("local_init_op"), parts);
  }
  if (!local_init_op.valid() && !LocalVariables(scope).empty()) local_init_op = LocalVariablesInitializer(scope);
  if (saver == nullptr && !model.empty()) {
    SaverOptions o;
    o.sharded = true;
    saver = NewSaver(Saver(scope, o));
  }
  if (!summary_op.valid()) summary_op = summary::MergeAll(scope);
  RETURN_IF_ERROR(scope.status());
  finalized_ = true;
  return absl::OkStatus();
}

ChiefSessionCreator::ChiefSessionCreator(const Scope& scope, std::shared_ptr<const Scaffold> scaffold,
                                         SessionOptions options, std::string checkpoint_dir)
    : scope_(scope),
      scaffold_(std::move(scaffold)),
      options_(std::move(options)),
      checkpoint_dir_(std::move(checkpoint_dir)) {}

StatusOr<std::unique_ptr<ClientSession>> ChiefSessionCreator::CreateSession() {
  if (scaffold_ == nullptr || !scaffold_->finalized()) {
    return errors::FailedPrecondition("ChiefSessionCreator needs a finalized Scaffold");
  }
  restored_.clear();
  auto session = std::make_unique<ClientSession>(scope_, options_);
  std::string checkpoint;
  if (!checkpoint_dir_.empty() && scaffold_->saver != nullptr) {
    ASSIGN_OR_RETURN(checkpoint, RestoreNewestGoodCheckpoint(*session, *scaffold_->saver, checkpoint_dir_));
  }
  if (!checkpoint.empty()) {
    restored_ = checkpoint;
    LOG(INFO) << "Restored the model from " << checkpoint;
  } else {
    if (scaffold_->init_op.valid()) {
      RETURN_IF_ERROR(session->Run(scaffold_->init_feed_dict, {}, {scaffold_->init_op}).status());
    }
    if (scaffold_->init_fn) RETURN_IF_ERROR(scaffold_->init_fn(session.get()));
  }
  ASSIGN_OR_RETURN(std::vector<std::string> missing, Uninitialized(*session, scaffold_->ready_op));
  if (!missing.empty()) {
    return errors::FailedPrecondition("Init operations did not make model ready; uninitialized variables: ",
                                      NameList(missing));
  }
  RETURN_IF_ERROR(RunLocalInit(*session, *scaffold_));
  return session;
}

WorkerSessionCreator::WorkerSessionCreator(const Scope& scope, std::shared_ptr<const Scaffold> scaffold,
                                           SessionOptions options, int64_t max_wait_secs)
    : scope_(scope), scaffold_(std::move(scaffold)), options_(std::move(options)), max_wait_secs_(max_wait_secs) {}

StatusOr<std::unique_ptr<ClientSession>> WorkerSessionCreator::CreateSession() {
  if (scaffold_ == nullptr || !scaffold_->finalized()) {
    return errors::FailedPrecondition("WorkerSessionCreator needs a finalized Scaffold");
  }
  using Clock = std::chrono::steady_clock;
  auto session = std::make_unique<ClientSession>(scope_, options_);
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::seconds(std::max<int64_t>(max_wait_secs_, 0));
  auto last_log = start;
  auto backoff = std::chrono::milliseconds(100);
  bool logged = false;
  while (true) {
    ASSIGN_OR_RETURN(std::vector<std::string> missing, Uninitialized(*session, scaffold_->ready_op));
    if (missing.empty()) break;
    const auto now = Clock::now();
    if (now >= deadline) {
      return errors::DeadlineExceeded("Session was not ready after waiting ", max_wait_secs_,
                                      " secs for the chief to initialize or restore the model; uninitialized "
                                      "variables: ",
                                      NameList(missing));
    }
    if (!logged || now - last_log >= std::chrono::seconds(5)) {
      LOG(WARNING) << "Waiting for the chief to initialize or restore the model (uninitialized variables: "
                   << NameList(missing) << "); waited "
                   << std::chrono::duration_cast<std::chrono::seconds>(now - start).count() << " of " << max_wait_secs_
                   << " s";
      last_log = now;
      logged = true;
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(backoff, deadline - now));
    backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
  }
  RETURN_IF_ERROR(RunLocalInit(*session, *scaffold_));
  return session;
}

}  // namespace dflow::train
