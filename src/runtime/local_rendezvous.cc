#include "runtime/local_rendezvous.h"

#include <utility>
#include <vector>

namespace dflow {

LocalRendezvous::~LocalRendezvous() { StartAbort(errors::Aborted("The rendezvous was destroyed")); }

Status LocalRendezvous::Send(const std::string& key, const Tensor& value, bool is_dead) {
  DoneCallback waiter;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!status_.ok()) return status_;
    auto [it, inserted] = table_.try_emplace(key);
    Entry& e = it->second;
    if (inserted) {
      e.has_value = true;
      e.value = value;
      e.is_dead = is_dead;
      return absl::OkStatus();
    }
    if (e.has_value) return errors::InvalidArgument("The tensor '", key, "' was sent twice to the rendezvous");
    waiter = std::move(e.waiter);
    table_.erase(it);
  }
  waiter(absl::OkStatus(), value, is_dead);
  return absl::OkStatus();
}

void LocalRendezvous::RecvAsync(const std::string& key, DoneCallback done) {
  Tensor value;
  bool is_dead = false;
  Status error;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!status_.ok()) {
      error = status_;
    } else {
      auto [it, inserted] = table_.try_emplace(key);
      Entry& e = it->second;
      if (inserted) {
        e.waiter = std::move(done);
        return;
      }
      if (!e.has_value) {
        error = errors::InvalidArgument("The tensor '", key, "' was asked for twice from the rendezvous");
      } else {
        value = std::move(e.value);
        is_dead = e.is_dead;
        table_.erase(it);
      }
    }
  }
  done(error, std::move(value), is_dead);
}

void LocalRendezvous::StartAbort(const Status& status) {
  std::vector<DoneCallback> waiters;
  Status s;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (status_.ok()) status_ = status.ok() ? errors::Aborted("The rendezvous was aborted") : status;
    s = status_;
    for (auto& [key, e] : table_)
      if (!e.has_value) waiters.push_back(std::move(e.waiter));
    table_.clear();
  }
  for (DoneCallback& w : waiters) w(s, Tensor(), false);
}

void LocalRendezvous::CancelRecv(const std::string& key, const Status& status) {
  DoneCallback waiter;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = table_.find(key);
    if (it == table_.end() || it->second.has_value) return;
    waiter = std::move(it->second.waiter);
    table_.erase(it);
  }
  waiter(status.ok() ? errors::Cancelled("The receive of '", key, "' was cancelled") : status, Tensor(), false);
}

Status LocalRendezvous::status() const {
  std::lock_guard<std::mutex> l(mu_);
  return status_;
}

}  // namespace dflow
