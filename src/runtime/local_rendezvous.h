// LocalRendezvous: the in-process rendezvous table of one step. A Send stores its value under
// the key (or hands it straight to a receiver that is already waiting); a RecvAsync takes the
// value when it is there, else waits for the Send.
//
// Contract:
// - A value is received once: the receive that takes it removes it from the table. While a value
//   waits for its receiver, a second Send of the same key is InvalidArgument naming the key; while
//   a receiver waits, a second RecvAsync of the same key gets InvalidArgument naming the key.
//   (Once a pair has met, the key is free again.)
// - StartAbort(status) fails every waiting receive with `status` and drops stored values; every
//   later Send returns `status` and every later RecvAsync calls back with it at once. The first
//   abort's status wins; an OK status becomes Aborted.
// - Thread-safe. Callbacks are invoked on the thread that completes them (the Send, the
//   RecvAsync when the value is already there, or StartAbort), never under the table's lock, so a
//   callback may call back into the rendezvous.
// - Nothing blocks: a receive that no Send ever matches waits until StartAbort, which is how a
//   failed or cancelled step releases it, or until CancelRecv, which is how a receiver that went
//   away (a peer's call that was cancelled or passed its deadline) releases it.
#pragma once

#include <mutex>
#include <string>
#include <unordered_map>

#include "framework/rendezvous.h"

namespace dflow {

class LocalRendezvous : public Rendezvous {
 public:
  LocalRendezvous() = default;
  // Fails receives still waiting with Aborted, so that no callback is lost.
  ~LocalRendezvous() override;
  LocalRendezvous(const LocalRendezvous&) = delete;
  LocalRendezvous& operator=(const LocalRendezvous&) = delete;

  Status Send(const std::string& key, const Tensor& value, bool is_dead) override;
  void RecvAsync(const std::string& key, DoneCallback done) override;
  void StartAbort(const Status& status) override;
  // A receiver of `key` that still waits gives up: its callback gets `status` now (on this
  // thread) and the key is free again. Nothing happens when no receiver waits for `key` (its
  // value came first, or it was never asked for).
  void CancelRecv(const std::string& key, const Status& status);

  // The abort status, OK while not aborted.
  Status status() const;

 private:
  struct Entry {
    bool has_value = false;  // else a receiver waits
    Tensor value;
    bool is_dead = false;
    DoneCallback waiter;
  };
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> table_;  // guarded by mu_
  Status status_;                                 // guarded by mu_
};

}  // namespace dflow
