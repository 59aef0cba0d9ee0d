#include "distributed/step_rendezvous.h"

namespace dflow {

StepRendezvous::StepRendezvous(int64_t step_id, std::string local_task, WorkerCache* peers)
    : step_id_(step_id), local_task_(std::move(local_task)), peers_(peers) {}

StepRendezvous::~StepRendezvous() = default;

Status StepRendezvous::Send(const std::string& key, const Tensor& value, bool is_dead) {
  RendezvousKey k;
  RETURN_IF_ERROR(ParseRendezvousKey(key, &k));
  ASSIGN_OR_RETURN(std::string recv_task, TaskOfDevice(k.recv_device));
  bool remote = recv_task != local_task_;
  if (remote) unserved_.fetch_add(1);
  Status s = local_.Send(key, value, is_dead);
  if (!s.ok() && remote) unserved_.fetch_sub(1);
  return s;
}

void StepRendezvous::ServeRecv(const std::string& key, DoneCallback done) {
  local_.RecvAsync(key, [this, done = std::move(done)](const Status& s, Tensor t, bool is_dead) {
    if (s.ok()) unserved_.fetch_sub(1);
    done(s, std::move(t), is_dead);
  });
}

Status StepRendezvous::Deposit(const std::string& key, const Tensor& value, bool is_dead) {
  undelivered_.fetch_add(1);
  Status s = local_.Send(key, value, is_dead);
  if (!s.ok()) undelivered_.fetch_sub(1);
  return s;
}

void StepRendezvous::ExpectDeposits(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> l(mu_);
  deposited_.insert(keys.begin(), keys.end());
}

void StepRendezvous::RecvAsync(const std::string& key, DoneCallback done) {
  RendezvousKey k;
  Status s = ParseRendezvousKey(key, &k);
  StatusOr<std::string> send_task = s.ok() ? TaskOfDevice(k.send_device) : StatusOr<std::string>(s);
  if (!send_task.ok()) {
    done(send_task.status(), Tensor(), false);
    return;
  }
  bool deposited;
  {
    std::lock_guard<std::mutex> l(mu_);
    deposited = !deposited_.empty() && deposited_.count(key) > 0;
  }
  if (deposited) {
    local_.RecvAsync(key, [this, done = std::move(done)](const Status& s, Tensor t, bool is_dead) {
      if (s.ok()) undelivered_.fetch_sub(1);
      done(s, std::move(t), is_dead);
    });
    return;
  }
  if (*send_task == local_task_) {
    local_.RecvAsync(key, std::move(done));
    return;
  }
  if (peers_ == nullptr) {
    done(errors::Internal("Step ", step_id_, " needs a tensor from ", *send_task, " but this task has no peers"),
         Tensor(), false);
    return;
  }
  StatusOr<std::shared_ptr<WorkerInterface>> w = peers_->GetWorker(*send_task);
  if (!w.ok()) {
    done(w.status(), Tensor(), false);
    return;
  }
  auto opts = std::make_shared<CallOptions>();
  Status aborted;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (abort_status_.ok()) in_flight_.insert(opts);
    else aborted = abort_status_;
  }
  if (!aborted.ok()) {
    // Outside the lock: the callback fails the step, which aborts this rendezvous again.
    done(aborted, Tensor(), false);
    return;
  }
  auto req = std::make_shared<proto::RecvTensorRequest>();
  req->set_step_id(step_id_);
  req->set_rendezvous_key(key);
  auto result = std::make_shared<RecvTensorResult>();
  std::shared_ptr<WorkerInterface> worker = *w;
  std::string from = *send_task;
  worker->RecvTensorAsync(req.get(), result.get(), opts.get(),
                          [this, req, result, opts, worker, from, done = std::move(done)](const Status& st) {
                            {
                              std::lock_guard<std::mutex> l(mu_);
                              in_flight_.erase(opts);
                            }
                            if (!st.ok()) {
                              done(errors::Annotate(st, absl::StrCat("Receiving a tensor from ", from, ": ")), Tensor(),
                                   false);
                              return;
                            }
                            // Handed over, not shared: nothing here keeps a reference.
                            done(absl::OkStatus(), std::move(result->tensor), result->is_dead);
                          });
}

void StepRendezvous::StartAbort(const Status& status) {
  std::set<std::shared_ptr<CallOptions>> calls;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!abort_status_.ok()) return;
    abort_status_ = status.ok() ? errors::Aborted("Step ", step_id_, " aborted") : status;
    calls = in_flight_;
  }
  local_.StartAbort(status);
  for (const auto& c : calls) c->StartCancel();
}

Status StepRendezvous::aborted_status() const {
  std::lock_guard<std::mutex> l(mu_);
  return abort_status_;
}

}  // namespace dflow
