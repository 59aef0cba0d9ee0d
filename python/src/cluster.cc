// Training loops for the Python package (servers and clusters are in server.cc):
// MonitoredSession / MonitoredTrainingSession over the C++ ones, with the
// C++ hooks (StopAtStepHook, CheckpointSaverHook, SummarySaverHook, StepCounterHook,
// SyncReplicasOptimizer's) and an adapter that runs Python hooks (python/dflow/training/
// monitored_session.py explains who does what).
//
// Python code runs inside a C++ training loop through adapters (hooks, savers, summary writers):
// the loop runs with the GIL released and each adapter takes it for its call. A Python exception
// raised there is kept (the "stash") and raised again to the Python caller once the C++ call
// returns its error; a tf.errors.OpError is turned into the Status of its code meanwhile, so that
// the loop treats it as TensorFlow's loop would (Unavailable is recovered from, OutOfRange ends
// training).
//
// Sessions lent to Python (a hook's session, MonitoredSession.raw_session()) are "borrowed": a
// handle on the loop's ClientSession that becomes invalid (RuntimeError on use) when the loop
// drops that session (recovery, close). The loop's coordinator joins a guard before it drops the
// session; the guard cancels the borrowed runs still in flight and waits for them.

#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "binding.h"
#include "py_ref.h"
#include "run_args.h"
#include "dflow/basic_session_run_hooks.h"
#include "dflow/coordinator.h"
#include "dflow/monitored_session.h"
#include "dflow/queue_runner.h"
#include "dflow/replica_device_setter.h"
#include "dflow/server.h"
#include "dflow/session.h"
#include "dflow/sync_replicas_optimizer.h"
#include "base/net.h"
#include "distributed/cluster_spec.h"
#include "framework/cancellation.h"
#include "proto/summary.pb.h"

namespace dflow::python {
namespace {

// ---- Python errors inside C++ loops ----

// The first Python exception an adapter met during one call from Python into the C++ loop.
struct Stash {
  std::mutex mu;
  py::object exc;  // guarded by mu; touched with the GIL held
};

// Converts the Python exception being handled into a Status and keeps it in `stash`.
Status StatusFromPython(py::error_already_set& e, Stash* stash) {
  py::object value = e.value();
  absl::StatusCode code = absl::StatusCode::kUnknown;
  std::string message = e.what();
  if (py::hasattr(value, "error_code")) {
    try {
      code = static_cast<absl::StatusCode>(value.attr("error_code").cast<int>());
      message = py::str(value.attr("message")).cast<std::string>();
    } catch (py::error_already_set&) {
      code = absl::StatusCode::kUnknown;
    } catch (py::cast_error&) {
      code = absl::StatusCode::kUnknown;
    }
  }
  if (stash != nullptr) {
    std::lock_guard<std::mutex> l(stash->mu);
    if (!stash->exc) stash->exc = value;
  }
  if (code == absl::StatusCode::kOk) code = absl::StatusCode::kUnknown;
  return Status(code, message);
}

// Calls `fn` with the GIL; a Python exception becomes a Status (and is stashed).
template <typename Fn>
Status CallPython(Stash* stash, Fn&& fn) {
  if (!Py_IsInitialized() || Finalizing()) return errors::FailedPrecondition("Python is exiting");
  py::gil_scoped_acquire gil;
  try {
    fn();
    return absl::OkStatus();
  } catch (py::error_already_set& e) {
    return StatusFromPython(e, stash);
  }
}

// Raises what the stash holds (and clears it); else the Status's exception.
[[noreturn]] void RaiseFromLoop(const Status& s, Stash* stash) {
  py::object exc;
  {
    std::lock_guard<std::mutex> l(stash->mu);
    exc = std::move(stash->exc);
    stash->exc = py::object();
  }
  if (exc) {
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    throw py::error_already_set();
  }
  ThrowStatus(s);
}

void ClearStash(Stash* stash) {
  std::lock_guard<std::mutex> l(stash->mu);
  stash->exc = py::object();
}

// ---- borrowed sessions ----

// A ClientSession owned by a training loop, lent to Python while the loop keeps it.
struct BorrowedState {
  std::shared_mutex mu;              // shared by runs, exclusive to Invalidate
  ClientSession* session = nullptr;  // null once the loop dropped it
  std::shared_ptr<Graph> graph;
  CancellationManager cancel;  // cancels the runs in flight when the session goes

  // Cancels what runs on the session and waits for it; from then on every use fails.
  void Invalidate() {
    cancel.StartCancel();
    // (Without the GIL: a run in flight takes it when it returns.)
    WithoutGil([&] {
      std::unique_lock<std::shared_mutex> l(mu);
      session = nullptr;
    });
  }
};

struct BorrowedSession {
  std::shared_ptr<BorrowedState> state;
};

[[noreturn]] void ThrowClosed() {
  PyErr_SetString(PyExc_RuntimeError,
                  "Attempted to use a session that its MonitoredSession has closed (or replaced after a failure).");
  throw py::error_already_set();
}

// Runs one step on a lent session, as tf.Session.run does on its own (session.cc).
py::list RunBorrowed(BorrowedState& st, py::list feeds, py::list fetches, py::list targets, int64_t timeout_ms) {
  RunArgs args = ToRunArgs(feeds, fetches, targets, st.graph.get());
  StatusOr<std::vector<Tensor>> result = RunLentStep(st.mu, st.session, args, timeout_ms, &st.cancel);
  args.feeds.clear();
  if (!result.ok()) {
    if (absl::IsCancelled(result.status()) && st.cancel.IsCancelled()) ThrowClosed();
    ThrowStatus(result.status());
  }
  return ToNumpyList(*std::move(result));
}

// Joined by the loop's coordinator before the loop drops the session: ends what Python does
// with it (the Python coordinator's threads, then the borrowed runs).
class SessionGuard : public train::RunnerInterface {
 public:
  SessionGuard(std::shared_ptr<BorrowedState> state, py::object on_end)
      : state_(std::move(state)), on_end_(std::move(on_end)) {}
  ~SessionGuard() override { DropPython(on_end_); }
  void RequestStop() override {}
  Status Join() override {
    Status s;
    if (!joined_.exchange(true) && Py_IsInitialized() && !Finalizing()) {
      py::gil_scoped_acquire gil;
      try {
        if (on_end_ && !on_end_.is_none()) on_end_();
      } catch (py::error_already_set& e) {
        s = StatusFromPython(e, nullptr);
      }
    }
    state_->Invalidate();
    return s;
  }
  bool IsRunning() const override { return !joined_.load(); }

 private:
  std::shared_ptr<BorrowedState> state_;
  py::object on_end_;
  std::atomic<bool> joined_{false};
};

// ---- adapters: Python savers, summary writers and hooks in the C++ loop ----

// What the adapters of one training loop share.
struct LoopShared {
  Stash stash;
  std::shared_ptr<Graph> graph;
  std::mutex mu;
  std::shared_ptr<BorrowedState> current;  // the session lent for the current attempt
  // The Python loop's callbacks (monitored_session.py): session_started(borrowed, coordinator)
  // -> the callable the guard calls when the session goes.
  py::object session_started;

  ~LoopShared() {
    DropPython(session_started);
    std::lock_guard<std::mutex> l(stash.mu);
    DropPython(stash.exc);
  }

  // The borrowed state for `s` (a new one, with a guard in `coord`, when `s` is another session).
  std::shared_ptr<BorrowedState> Lend(ClientSession* s, train::Coordinator* coord, bool fresh) {
    std::shared_ptr<BorrowedState> old;
    std::shared_ptr<BorrowedState> st;
    {
      std::lock_guard<std::mutex> l(mu);
      if (!fresh && current != nullptr && current->session == s) return current;
      old = current;
      st = std::make_shared<BorrowedState>();
      st->session = s;
      st->graph = graph;
      current = st;
    }
    if (old != nullptr && old.get() != st.get()) old->Invalidate();
    py::object on_end = py::none();
    if (session_started && !session_started.is_none()) {
      std::shared_ptr<train::Coordinator> shared;
      if (coord != nullptr) shared = coord->weak_from_this().lock();
      on_end = session_started(BorrowedSession{st}, shared ? py::cast(shared) : py::object(py::none()));
    }
    if (coord != nullptr) coord->RegisterRunner(std::make_shared<SessionGuard>(st, std::move(on_end)));
    return st;
  }
};

class PySaver : public train::SaverInterface {
 public:
  PySaver(py::object impl, std::shared_ptr<LoopShared> shared) : impl_(std::move(impl)), shared_(std::move(shared)) {}
  ~PySaver() override { DropPython(impl_); }
  StatusOr<std::string> Save(const ClientSession& session, const std::string& prefix, int64_t step) override {
    std::string path;
    Status s = CallPython(Stash(), [&] {
      WithSession(session, [&](py::object sess) { path = impl_.attr("save")(sess, prefix, step).cast<std::string>(); });
    });
    if (!s.ok()) return s;
    return path;
  }
  Status Restore(const ClientSession& session, const std::string& path) override {
    return CallPython(Stash(),
                      [&] { WithSession(session, [&](py::object sess) { impl_.attr("restore")(sess, path); }); });
  }
  StatusOr<std::string> LatestCheckpoint(const std::string& dir) override {
    std::string path;
    Status s = CallPython(Stash(), [&] {
      py::object r = impl_.attr("latest_checkpoint")(dir);
      path = r.is_none() ? std::string() : r.cast<std::string>();
    });
    if (!s.ok()) return s;
    return path;
  }
  StatusOr<std::vector<std::string>> Checkpoints(const std::string& dir) override {
    std::vector<std::string> paths;
    Status s = CallPython(Stash(), [&] { paths = impl_.attr("checkpoints")(dir).cast<std::vector<std::string>>(); });
    if (!s.ok()) return s;
    return paths;
  }
  void set_shared(std::shared_ptr<LoopShared> shared) { shared_ = std::move(shared); }

 private:
  dflow::python::Stash* Stash() const { return shared_ ? &shared_->stash : nullptr; }
  // Calls `fn` with the session as a Python session handle: the loop's lent one, or one lent for
  // this call only (the chief restores into a session before it is the loop's).
  template <typename Fn>
  void WithSession(const ClientSession& session, Fn&& fn) const {
    if (shared_) {
      std::shared_ptr<BorrowedState> current;
      {
        std::lock_guard<std::mutex> l(shared_->mu);
        current = shared_->current;
      }
      if (current != nullptr && current->session == &session) return fn(py::cast(BorrowedSession{current}));
    }
    auto st = std::make_shared<BorrowedState>();
    st->session = const_cast<ClientSession*>(&session);
    st->graph = shared_ ? shared_->graph : nullptr;
    try {
      fn(py::cast(BorrowedSession{st}));
    } catch (...) {
      st->Invalidate();
      throw;
    }
    st->Invalidate();
  }

  py::object impl_;
  std::shared_ptr<LoopShared> shared_;
};

class PySummaryWriter : public train::SummaryWriterInterface {
 public:
  PySummaryWriter(py::object impl, std::shared_ptr<LoopShared> shared)
      : impl_(std::move(impl)), shared_(std::move(shared)) {}
  ~PySummaryWriter() override { DropPython(impl_); }
  Status AddSummary(const std::string& serialized, int64_t step) override {
    return CallPython(stash(), [&] { impl_.attr("add_summary")(py::bytes(serialized), step); });
  }
  Status AddScalar(const std::string& tag, double value, int64_t step) override {
    proto::Summary s;
    proto::Summary::Value* v = s.add_value();
    v->set_tag(tag);
    v->set_simple_value(static_cast<float>(value));
    return AddSummary(s.SerializeAsString(), step);
  }
  Status Flush() override {
    return CallPython(stash(), [&] { impl_.attr("flush")(); });
  }
  void set_shared(std::shared_ptr<LoopShared> shared) { shared_ = std::move(shared); }

 private:
  Stash* stash() const { return shared_ ? &shared_->stash : nullptr; }
  py::object impl_;
  std::shared_ptr<LoopShared> shared_;
};

// The step being run, lent to a Python hook's before_run/after_run.
struct RunContextRef {
  train::SessionRunContext* ctx = nullptr;
};

// Runs a Python hook (a monitored_session._HookBridge) in the C++ loop.
class PyHook : public train::SessionRunHook {
 public:
  explicit PyHook(py::object bridge) : bridge_(std::move(bridge)) {}
  ~PyHook() override { DropPython(bridge_); }
  // Set when the loop is made: the adapters of one loop share the stash and the lent session.
  void Attach(std::shared_ptr<LoopShared> shared, bool first) {
    shared_ = std::move(shared);
    first_ = first;
  }

  Status Begin() override {
    return CallPython(stash(), [&] { bridge_.attr("cpp_begin")(); });
  }
  Status AfterCreateSession(ClientSession* session, train::Coordinator* coord) override {
    std::shared_ptr<BorrowedState> st;
    Status s = CallPython(stash(), [&] { st = shared_->Lend(session, coord, first_); });
    if (!s.ok()) return s;
    return CallPython(stash(), [&] { bridge_.attr("cpp_after_create_session")(BorrowedSession{st}); });
  }
  StatusOr<train::SessionRunArgs> BeforeRun(train::SessionRunContext* ctx) override {
    train::SessionRunArgs args;
    Status s = CallPython(stash(), [&] {
      py::object r = bridge_.attr("cpp_before_run")(RunContextRef{ctx}, Lent(ctx->session()));
      if (r.is_none()) return;
      py::tuple t = r.cast<py::tuple>();
      for (py::handle f : t[0].cast<py::list>()) args.fetches.push_back(f.cast<const OutputRef&>().out);
      for (py::handle f : t[1].cast<py::list>()) {
        py::tuple pair = py::reinterpret_borrow<py::tuple>(f);
        const OutputRef& o = pair[0].cast<const OutputRef&>();
        args.feeds.emplace(o.out, Input::Initializer(ToTensor(pair[1], o.out.dtype())));
      }
      for (py::handle n : t[2].cast<py::list>()) args.targets.push_back(n.cast<const NodeRef&>().op());
    });
    if (!s.ok()) return s;
    return args;
  }
  Status AfterRun(train::SessionRunContext* ctx, const train::SessionRunValues& values) override {
    return CallPython(stash(), [&] {
      py::list results(values.results.size());
      for (size_t i = 0; i < values.results.size(); ++i) results[i] = ToNumpy(values.results[i]);
      bridge_.attr("cpp_after_run")(RunContextRef{ctx}, Lent(ctx->session()), results);
    });
  }
  Status End(ClientSession* session) override {
    return CallPython(stash(), [&] { bridge_.attr("cpp_end")(Lent(session)); });
  }

 private:
  Stash* stash() const { return shared_ ? &shared_->stash : nullptr; }
  BorrowedSession Lent(ClientSession* s) { return BorrowedSession{shared_->Lend(s, nullptr, false)}; }

  py::object bridge_;
  std::shared_ptr<LoopShared> shared_;
  bool first_ = false;
};

// ---- the training loop handle ----

struct MonitoredSessionHandle {
  std::unique_ptr<train::MonitoredSession> session;
  std::shared_ptr<LoopShared> shared;
  // The error a run raised (or the caller's, for a loop abandoned): Close returns it again, and
  // TensorFlow's close does not raise it twice.
  Status run_error;

  train::MonitoredSession& get() {
    if (session == nullptr) throw py::value_error("The MonitoredSession was not created");
    return *session;
  }
  ~MonitoredSessionHandle() {
    // Close (when the caller did not) may wait for steps: without the GIL.
    WithoutGil([&] { session.reset(); });
    if (shared != nullptr && shared->current != nullptr) shared->current->Invalidate();
  }
};

// What the Python side passes for a C++ SessionRunHook: a C++ hook, or a bridge to adapt.
std::vector<std::shared_ptr<train::SessionRunHook>> HookList(py::list hooks,
                                                             const std::shared_ptr<LoopShared>& shared) {
  std::vector<std::shared_ptr<train::SessionRunHook>> out;
  bool first_py = true;
  for (py::handle h : hooks) {
    if (py::isinstance<train::SessionRunHook>(h)) {
      auto hook = h.cast<std::shared_ptr<train::SessionRunHook>>();
      if (auto* p = dynamic_cast<PyHook*>(hook.get())) {
        p->Attach(shared, first_py);
        first_py = false;
      }
      out.push_back(std::move(hook));
    } else {
      auto p = std::make_shared<PyHook>(py::reinterpret_borrow<py::object>(h));
      p->Attach(shared, first_py);
      first_py = false;
      out.push_back(std::move(p));
    }
  }
  return out;
}

void AttachAdapters(py::handle obj, const std::shared_ptr<LoopShared>& shared) {
  if (obj.is_none()) return;
  auto saver = py::cast<std::shared_ptr<train::SaverInterface>>(obj);
  if (auto* p = dynamic_cast<PySaver*>(saver.get())) p->set_shared(shared);
}

SessionOptions SessionOptionsFrom(const std::string& target, py::dict config) {
  SessionOptions o;
  o.target = target;
  if (config.contains("inter_op_threads")) o.inter_op_threads = config["inter_op_threads"].cast<int>();
  if (config.contains("allow_soft_placement")) o.allow_soft_placement = config["allow_soft_placement"].cast<bool>();
  if (config.contains("log_device_placement")) o.log_device_placement = config["log_device_placement"].cast<bool>();
  if (config.contains("operation_timeout_ms")) o.operation_timeout_ms = config["operation_timeout_ms"].cast<int64_t>();
  if (config.contains("device_filters")) o.device_filters = config["device_filters"].cast<std::vector<std::string>>();
  if (config.contains("fuse_ops")) o.fuse_ops = config["fuse_ops"].cast<bool>();
  return o;
}

// The pieces of the model the Python Scaffold made (None: the C++ default).
train::Scaffold ScaffoldFrom(py::dict d) {
  train::Scaffold s;
  auto node = [&](const char* k) -> Operation {
    if (!d.contains(k) || d[k].is_none()) return Operation();
    return d[k].cast<const NodeRef&>().op();
  };
  auto out = [&](const char* k) -> Output {
    if (!d.contains(k) || d[k].is_none()) return Output();
    return d[k].cast<const OutputRef&>().out;
  };
  s.init_op = node("init_op");
  s.ready_op = out("ready_op");
  s.local_init_op = node("local_init_op");
  s.summary_op = out("summary_op");
  if (d.contains("saver") && !d["saver"].is_none()) s.saver = d["saver"].cast<std::shared_ptr<train::SaverInterface>>();
  if (d.contains("init_feeds")) {
    for (py::handle f : d["init_feeds"].cast<py::list>()) {
      py::tuple pair = py::reinterpret_borrow<py::tuple>(f);
      const OutputRef& o = pair[0].cast<const OutputRef&>();
      s.init_feed_dict.emplace(o.out, Input::Initializer(ToTensor(pair[1], o.out.dtype())));
    }
  }
  return s;
}

train::RecoveryOptions RecoveryFrom(py::dict d) {
  train::RecoveryOptions r;
  if (d.contains("max_recovery_attempts")) r.max_recovery_attempts = d["max_recovery_attempts"].cast<int>();
  if (d.contains("initial_backoff_ms")) r.initial_backoff_ms = d["initial_backoff_ms"].cast<int64_t>();
  if (d.contains("max_backoff_ms")) r.max_backoff_ms = d["max_backoff_ms"].cast<int64_t>();
  return r;
}

// The chief's init_fn: a Python callable(session) run when there was no checkpoint.
std::function<Status(ClientSession*)> InitFn(py::object fn, const std::shared_ptr<LoopShared>& shared) {
  if (fn.is_none()) return nullptr;
  auto keep = std::make_shared<PyRef>(std::move(fn));
  std::weak_ptr<LoopShared> weak = shared;
  return [keep, weak](ClientSession* session) -> Status {
    std::shared_ptr<LoopShared> sh = weak.lock();
    return CallPython(sh ? &sh->stash : nullptr, [&] {
      auto st = std::make_shared<BorrowedState>();
      st->session = session;
      st->graph = sh ? sh->graph : nullptr;
      keep->o(BorrowedSession{st});
      st->Invalidate();
    });
  };
}

// Runs `make` (which creates the loop) with the GIL released; raises its error.
template <typename Make>
std::shared_ptr<MonitoredSessionHandle> MakeLoop(std::shared_ptr<LoopShared> shared, Make&& make) {
  StatusOr<std::unique_ptr<train::MonitoredSession>> r;
  {
    py::gil_scoped_release nogil;
    r = make();
  }
  if (!r.ok()) RaiseFromLoop(r.status(), &shared->stash);
  ClearStash(&shared->stash);
  auto h = std::make_shared<MonitoredSessionHandle>();
  h->session = *std::move(r);
  h->shared = std::move(shared);
  return h;
}

std::shared_ptr<LoopShared> NewShared(const Scope& scope, py::object session_started) {
  auto shared = std::make_shared<LoopShared>();
  shared->graph = scope.graph_as_shared_ptr();
  shared->session_started = std::move(session_started);
  return shared;
}

}  // namespace

// A session lent by a training loop, for ClientSessionOf (session.cc): the C++ session, or null
// when `session` is not a lent one. RuntimeError when the loop has dropped it.
const ClientSession* BorrowedClientSession(py::handle session) {
  if (!py::isinstance<BorrowedSession>(session)) return nullptr;
  BorrowedSession& b = session.cast<BorrowedSession&>();
  if (b.state == nullptr || b.state->session == nullptr) ThrowClosed();
  return b.state->session;
}

void BindCluster(py::module_& m) {
  // ---- sessions lent by training loops ----
  BindLentSession<BorrowedSession>(m, "BorrowedSession", "The training loop closes it.", RunBorrowed, ThrowClosed);

  // ---- hooks, savers, summary writers ----
  py::class_<train::SessionRunHook, std::shared_ptr<train::SessionRunHook>>(m, "SessionRunHook");
  py::class_<train::SaverInterface, std::shared_ptr<train::SaverInterface>>(m, "SaverInterface");
  py::class_<train::SummaryWriterInterface, std::shared_ptr<train::SummaryWriterInterface>>(m,
                                                                                            "SummaryWriterInterface");
  py::class_<RunContextRef>(m, "RunContext")
      .def("request_stop",
           [](RunContextRef& r) {
             if (r.ctx != nullptr) r.ctx->RequestStop();
           })
      .def_property_readonly("stop_requested",
                             [](const RunContextRef& r) { return r.ctx != nullptr && r.ctx->stop_requested(); })
      .def_property_readonly("id", [](const RunContextRef& r) { return reinterpret_cast<uintptr_t>(r.ctx); });

  m.def(
      "py_saver",
      [](py::object impl) -> std::shared_ptr<train::SaverInterface> {
        return std::make_shared<PySaver>(std::move(impl), nullptr);
      },
      "A SaverInterface whose save/restore/latest_checkpoint/checkpoints are the object's methods.");
  m.def(
      "py_summary_writer",
      [](py::object impl) -> std::shared_ptr<train::SummaryWriterInterface> {
        return std::make_shared<PySummaryWriter>(std::move(impl), nullptr);
      },
      "A SummaryWriterInterface over an object with add_summary(bytes, step) and flush().");
  m.def("py_hook", [](py::object bridge) -> std::shared_ptr<train::SessionRunHook> {
    return std::make_shared<PyHook>(std::move(bridge));
  });
  auto step = [](py::object o) -> Output { return o.is_none() ? Output() : o.cast<const OutputRef&>().out; };
  m.def("stop_at_step_hook", [step](py::object global_step, int64_t num_steps, int64_t last_step) {
    return std::static_pointer_cast<train::SessionRunHook>(std::make_shared<train::StopAtStepHook>(step(global_step),
                                                                                                   num_steps,
                                                                                                   last_step));
  });
  m.def("checkpoint_saver_hook",
        [step](const std::string& dir, std::shared_ptr<train::SaverInterface> saver, py::object global_step,
               int64_t save_secs, int64_t save_steps, const std::string& basename, int max_failures) {
          return std::static_pointer_cast<train::SessionRunHook>(std::make_shared<train::CheckpointSaverHook>(
              dir, std::move(saver), step(global_step), save_secs, save_steps, basename, max_failures));
        });
  m.def("step_counter_hook", [step](py::object global_step, int64_t every_n_steps, double every_n_secs,
                                    std::shared_ptr<train::SummaryWriterInterface> writer) {
    return std::static_pointer_cast<train::SessionRunHook>(
        std::make_shared<train::StepCounterHook>(step(global_step), every_n_steps, every_n_secs, std::move(writer)));
  });
  m.def("summary_saver_hook", [step](py::object summary_op, std::shared_ptr<train::SummaryWriterInterface> writer,
                                     py::object global_step, int64_t save_steps, int64_t save_secs) {
    return std::static_pointer_cast<train::SessionRunHook>(std::make_shared<train::SummarySaverHook>(
        step(summary_op), std::move(writer), step(global_step), save_steps, save_secs));
  });

  // ---- training loops ----
  py::class_<MonitoredSessionHandle, std::shared_ptr<MonitoredSessionHandle>>(m, "MonitoredSession")
      .def("run",
           [](MonitoredSessionHandle& h, py::list feeds, py::list fetches, py::list targets) {
             train::MonitoredSession& ms = h.get();
             RunArgs args = ToRunArgs(feeds, fetches, targets, h.shared->graph.get());
             ClearStash(&h.shared->stash);
             StatusOr<std::vector<Tensor>> r;
             {
               py::gil_scoped_release nogil;
               r = ms.Run(args.feeds, args.fetches, args.targets);
             }
             args.feeds.clear();
             if (!r.ok()) {
               if (!absl::IsOutOfRange(r.status())) h.run_error = r.status();
               RaiseFromLoop(r.status(), &h.shared->stash);
             }
             ClearStash(&h.shared->stash);
             return ToNumpyList(*std::move(r));
           })
      .def("should_stop", [](MonitoredSessionHandle& h) { return h.session == nullptr || h.session->ShouldStop(); })
      .def(
          "close",
          [](MonitoredSessionHandle& h, bool end_hooks) {
            if (h.session == nullptr) return;
            if (!end_hooks && h.run_error.ok()) {
              // The caller's loop raised: no hooks' End (TensorFlow's close after an exception).
              h.run_error = errors::Aborted("The training loop raised an exception");
              h.session->Abandon(h.run_error);
            }
            ClearStash(&h.shared->stash);
            Status s;
            {
              py::gil_scoped_release nogil;
              s = h.session->Close();
              h.session.reset();  // the hooks (and what they hold) go now
            }
            if (h.shared->current != nullptr) h.shared->current->Invalidate();
            if (!s.ok() && s != h.run_error) RaiseFromLoop(s, &h.shared->stash);
            ClearStash(&h.shared->stash);
          },
          py::arg("end_hooks") = true)
      .def("raw_session",
           [](MonitoredSessionHandle& h) -> py::object {
             if (h.session == nullptr || h.session->raw_session() == nullptr) return py::none();
             std::shared_ptr<train::Coordinator> coord = h.session->coordinator();
             return py::cast(BorrowedSession{h.shared->Lend(h.session->raw_session(), coord.get(), false)});
           })
      .def_property_readonly("sessions_created", [](MonitoredSessionHandle& h) { return h.get().sessions_created(); });

  // MonitoredSession(creator, hooks): the creator is the chief's (restore or init) or a worker's
  // (wait for the model).
  m.def("monitored_session", [](const Scope& scope, bool is_chief, const std::string& target, py::dict config,
                                const std::string& checkpoint_dir, py::dict scaffold, py::object init_fn,
                                int64_t max_wait_secs, py::list hooks, py::dict recovery, py::object session_started) {
    auto shared = NewShared(scope, std::move(session_started));
    auto sc = std::make_shared<train::Scaffold>(ScaffoldFrom(scaffold));
    AttachAdapters(scaffold.contains("saver") ? py::handle(scaffold["saver"]) : py::handle(py::none()), shared);
    sc->init_fn = InitFn(init_fn, shared);
    ThrowIfError(sc->Finalize(scope));
    ThrowIfBuildError(scope.graph());
    SessionOptions options = SessionOptionsFrom(target, config);
    std::unique_ptr<train::SessionCreator> creator;
    if (is_chief) {
      creator = std::make_unique<train::ChiefSessionCreator>(scope, sc, options, checkpoint_dir);
    } else {
      creator = std::make_unique<train::WorkerSessionCreator>(scope, sc, options, max_wait_secs);
    }
    auto hook_list = HookList(hooks, shared);
    train::RecoveryOptions r = RecoveryFrom(recovery);
    return MakeLoop(shared, [&] { return train::MonitoredSession::Create(std::move(creator), hook_list, r); });
  });
  // MonitoredTrainingSession: the C++ one, with the hooks the Python side made (in TensorFlow's
  // order); it adds the job's end on the chief and knows the job's end from this process's server.
  m.def("monitored_training_session",
        [step](const Scope& scope, bool is_chief, const std::string& master, py::dict config,
               const std::string& checkpoint_dir, py::dict scaffold, py::object init_fn, py::object global_step,
               int64_t max_wait_secs, py::list hooks, py::dict recovery, bool notify_job_complete,
               py::object session_started) {
          auto shared = NewShared(scope, std::move(session_started));
          train::MonitoredTrainingSessionOptions o;
          o.master = master;
          o.is_chief = is_chief;
          o.checkpoint_dir = checkpoint_dir;
          o.scaffold = ScaffoldFrom(scaffold);
          AttachAdapters(scaffold.contains("saver") ? py::handle(scaffold["saver"]) : py::handle(py::none()), shared);
          o.scaffold.init_fn = InitFn(init_fn, shared);
          o.hooks = HookList(hooks, shared);
          // The Python side made the built-in hooks (TensorFlow's), so the C++ ones are off.
          o.save_checkpoint_secs = 0;
          o.save_checkpoint_steps = 0;
          o.save_summaries_steps = 0;
          o.log_step_count_steps = 0;
          o.global_step = step(global_step);
          o.config = SessionOptionsFrom(master, config);
          o.max_wait_secs = max_wait_secs;
          o.recovery = RecoveryFrom(recovery);
          o.notify_job_complete = notify_job_complete;
          return MakeLoop(shared, [&] { return train::MonitoredTrainingSession(scope, std::move(o)); });
        });

  // ---- SyncReplicasOptimizer ----
  py::class_<train::SyncReplicasOptimizer, std::shared_ptr<train::SyncReplicasOptimizer>>(m, "SyncReplicasOptimizer")
      .def(py::init([](const train::Optimizer& opt, int replicas_to_aggregate, int total_num_replicas) {
        return std::make_shared<train::SyncReplicasOptimizer>(opt, replicas_to_aggregate, total_num_replicas);
      }))
      .def("apply_gradients",
           [](train::SyncReplicasOptimizer& s, const Scope& scope, py::list grads_and_vars,
              const OutputRef& global_step) {
             std::vector<std::pair<Output, Output>> gvs;
             for (py::handle h : grads_and_vars) {
               py::tuple t = py::reinterpret_borrow<py::tuple>(h);
               Output g = t[0].is_none() ? Output() : t[0].cast<const OutputRef&>().out;
               gvs.emplace_back(g, t[1].cast<const OutputRef&>().out);
             }
             ThrowIfBuildError(scope.graph());
             Operation op = s.ApplyGradients(scope, gvs, global_step.out);
             ThrowIfBuildError(scope.graph());
             ThrowIfError(scope.status());
             return NodeRef{scope.graph_as_shared_ptr(), op.node()};
           })
      .def("get_init_tokens_op",
           [](train::SyncReplicasOptimizer& s, const Scope& scope, int num_tokens) {
             Operation op = s.GetInitTokensOp(scope, num_tokens);
             ThrowIfBuildError(scope.graph());
             ThrowIfError(scope.status());
             return NodeRef{scope.graph_as_shared_ptr(), op.node()};
           })
      .def("make_session_run_hook",
           [](train::SyncReplicasOptimizer& s, const Scope& scope, bool is_chief, int num_tokens) {
             std::unique_ptr<train::SessionRunHook> hook = s.MakeSessionRunHook(scope, is_chief, num_tokens);
             ThrowIfBuildError(scope.graph());
             ThrowIfError(scope.status());
             if (hook == nullptr) ThrowStatus(errors::FailedPrecondition("apply_gradients must be called first"));
             return std::shared_ptr<train::SessionRunHook>(std::move(hook));
           })
      .def("get_chief_queue_runner", &train::SyncReplicasOptimizer::GetChiefQueueRunner)
      .def("num_dropped_gradients",
           [](const train::SyncReplicasOptimizer& s, const Scope& scope) {
             Output o = s.NumDroppedGradients(scope);
             ThrowIfBuildError(scope.graph());
             return OutputRef{scope.graph_as_shared_ptr(), o};
           })
      .def("parts",
           [](const train::SyncReplicasOptimizer& s, const Scope& scope) {
             auto g = scope.graph_as_shared_ptr();
             auto node = [&](const Operation& o) -> py::object {
               if (!o.valid()) return py::none();
               return py::cast(NodeRef{g, o.node()});
             };
             auto out = [&](const Output& o) -> py::object {
               if (!o.valid()) return py::none();
               return py::cast(OutputRef{g, o});
             };
             py::dict d;
             d["chief_init_op"] = node(s.chief_init_op());
             d["local_step_init_op"] = node(s.local_step_init_op());
             d["local_step"] = out(s.local_step());
             d["sync_token_queue"] = out(s.sync_token_queue());
             d["sync_op"] = node(s.sync_op());
             return d;
           })
      .def_property_readonly("replicas_to_aggregate", &train::SyncReplicasOptimizer::replicas_to_aggregate)
      .def_property_readonly("total_num_replicas", &train::SyncReplicasOptimizer::total_num_replicas);
}

}  // namespace dflow::python
