// Estimators for the Python package: dflow::estimator bound as it is (the feature columns they
// take are bound in feature_columns.cc).
//
// Python functions that the C++ side calls while it builds (a numeric column's normalizer_fn, a
// DNN's activation_fn, an estimator's input_fn and model_fn, a canned estimator's optimizer
// factory) are called with the GIL taken, in the Scope C++ gives them (the Python layer builds
// there through dflow.data.scope_graph). An exception such a function raises is kept, the C++
// call fails, and the binding raises the kept exception unchanged when the call returns.
//
// Estimator calls (train, evaluate, predict, train_and_evaluate) release the GIL while the C++
// loop runs.
#include <signal.h>

#include <atomic>
#include <optional>
#include <shared_mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "api/scope_internal.h"
#include "binding.h"
#include "run_args.h"
#include "estimator_internal.h"
#include "dflow/estimator.h"
#include "dflow/feature_column.h"
#include "dflow/train.h"
#include "distributed/cluster_spec.h"

namespace dflow::python {

namespace fc = feature_column;
namespace est = estimator;

// ---- Python functions called from C++ (declared in estimator_internal.h) ----

namespace {

// The first exception a callback raised on this thread, until the binding raises it.
std::optional<py::error_already_set>& Pending() {
  thread_local std::optional<py::error_already_set> pending;
  return pending;
}

// The Status a Python exception stands for in the C++ loop: a tf.errors.OpError's own code (an
// OutOfRangeError from a hook ends training as the end of input does), else Unknown (which the
// loop does not retry).
thread_local absl::StatusCode g_raised_code = absl::StatusCode::kUnknown;

}  // namespace

// Raises the pending exception (clearing the build error of `g` that it caused), if any.
void RaisePending(Graph* g) {
  std::optional<py::error_already_set>& p = Pending();
  if (!p.has_value()) return;
  py::error_already_set e = std::move(*p);
  p.reset();
  if (g != nullptr) {
    Status ignored = g->TakeBuildError();  // the exception says what went wrong
    (void)ignored;
  }
  throw e;
}

// A Python callable shared by C++ function objects: copies never touch Python reference counts
// (they may be made without the GIL), and the last owner drops it with the GIL taken.
PyFn Keep(py::object fn) {
  return PyFn(new py::object(std::move(fn)), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
}

void NotePending(py::error_already_set&& e) {
  g_raised_code = absl::StatusCode::kUnknown;
  py::object v = e.value();
  if (v && py::hasattr(v, "error_code")) {
    try {
      int code = v.attr("error_code").cast<int>();
      if (code > 0 && code <= 16) g_raised_code = static_cast<absl::StatusCode>(code);
    } catch (py::error_already_set&) {
    } catch (py::cast_error&) {
    }
  }
  if (!Pending().has_value()) Pending().emplace(std::move(e));
}

Status PythonRaised(const char* what) {
  return Status(g_raised_code, absl::StrCat("The Python ", what, " raised an exception"));
}

// A function Output -> Output built in a scope (normalizer_fn, activation_fn): fn(scope, x) -> x.
std::function<Output(const Scope&, const Output&)> UnaryBuilder(py::object fn, const char* what) {
  if (fn.is_none()) return nullptr;
  PyFn f = Keep(std::move(fn));
  return [f, what](const Scope& s, const Output& x) -> Output {
    Output out = CallPython<Output>(
        [&] {
          py::object r = (*f)(s, OutputRef{s.graph_as_shared_ptr(), x});
          return r.cast<const OutputRef&>().out;
        },
        Output());
    if (!out.valid() && s.ok()) s.UpdateStatus(PythonRaised(what));
    return out;
  };
}

namespace {

// ---- estimators ----

const char* ModeName(est::ModeKeys m) {
  switch (m) {
    case est::ModeKeys::kTrain: return "train";
    case est::ModeKeys::kEval: return "eval";
    case est::ModeKeys::kPredict: return "infer";
  }
  return "?";
}

// input_fn(scope) returns ("dataset", Dataset) or ("tensors", {name: Output}, Output or None).
est::InputFn InputFnOf(py::object fn) {
  PyFn f = Keep(std::move(fn));
  return [f](const Scope& s) -> StatusOr<est::InputFnResult> {
    std::optional<est::InputFnResult> r = CallPython<std::optional<est::InputFnResult>>(
        [&]() -> std::optional<est::InputFnResult> {
          py::tuple t = (*f)(s).cast<py::tuple>();
          std::string kind = t[0].cast<std::string>();
          if (kind == "dataset") return est::InputFnResult(t[1].cast<data::Dataset>());
          Output labels = t[2].is_none() ? Output() : t[2].cast<const OutputRef&>().out;
          return est::InputFnResult(FeaturesOf(t[1].cast<py::dict>()), labels);
        },
        std::nullopt);
    if (!r.has_value()) return PythonRaised("input_fn");
    return *std::move(r);
  };
}

// model_fn(scope, features, labels or None, mode) returns a dict: predictions {name: Output},
// loss (Output or None), train_op (Node or None), eval_metric_ops {name: (value, update_op)}.
est::ModelFn ModelFnOf(py::object fn) {
  PyFn f = Keep(std::move(fn));
  return [f](const Scope& s, const fc::Features& features, const Output& labels, est::ModeKeys mode,
             const est::Params&) -> StatusOr<est::EstimatorSpec> {
    std::optional<est::EstimatorSpec> spec = CallPython<std::optional<est::EstimatorSpec>>(
        [&]() -> std::optional<est::EstimatorSpec> {
          auto g = s.graph_as_shared_ptr();
          py::dict pf;
          for (const auto& [k, v] : features) pf[py::str(k)] = OutputRef{g, v};
          py::object pl = labels.valid() ? py::cast(OutputRef{g, labels}) : py::object(py::none());
          py::dict d = (*f)(s, pf, pl, ModeName(mode)).cast<py::dict>();
          est::EstimatorSpec spec;
          spec.mode = mode;
          if (d.contains("predictions") && !d["predictions"].is_none()) {
            for (auto [k, v] : d["predictions"].cast<py::dict>()) {
              spec.predictions[k.cast<std::string>()] = v.cast<const OutputRef&>().out;
            }
          }
          if (d.contains("loss") && !d["loss"].is_none()) spec.loss = d["loss"].cast<const OutputRef&>().out;
          if (d.contains("train_op") && !d["train_op"].is_none())
            spec.train_op = d["train_op"].cast<const NodeRef&>().op();
          if (d.contains("eval_metric_ops") && !d["eval_metric_ops"].is_none()) {
            for (auto [k, v] : d["eval_metric_ops"].cast<py::dict>()) {
              py::tuple t = v.cast<py::tuple>();
              spec.eval_metric_ops[k.cast<std::string>()] = metrics::Metric{t[0].cast<const OutputRef&>().out,
                                                                            t[1].cast<const OutputRef&>().out};
            }
          }
          return spec;
        },
        std::nullopt);
    if (!spec.has_value()) return PythonRaised("model_fn");
    return *std::move(spec);
  };
}

// A canned estimator's optimizer by TensorFlow's short names, or from a Python factory that
// returns a bound dflow Optimizer (made fresh for every graph: optimizers keep per-graph slots).
est::OptimizerFn OptimizerFnOf(py::object spec, double learning_rate) {
  if (spec.is_none()) return nullptr;
  if (py::isinstance<py::str>(spec)) {
    std::string name = spec.cast<std::string>();
    const float lr = static_cast<float>(learning_rate);
    if (name == "Adagrad") return [lr] { return std::make_unique<train::AdagradOptimizer>(lr); };
    if (name == "Adam") return [lr] { return std::make_unique<train::AdamOptimizer>(lr); };
    if (name == "Ftrl") return [lr] { return std::make_unique<train::FtrlOptimizer>(lr); };
    if (name == "RMSProp") return [lr] { return std::make_unique<train::RMSPropOptimizer>(lr); };
    if (name == "SGD") return [lr] { return std::make_unique<train::GradientDescentOptimizer>(lr); };
    throw py::value_error("Unsupported optimizer name: " + name +
                          ". Supported names are: ['Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD']");
  }
  PyFn f = Keep(std::move(spec));
  return [f]() -> std::unique_ptr<train::Optimizer> {
    return CallPython<std::unique_ptr<train::Optimizer>>(
        [&] {
          auto shared = (*f)().cast<std::shared_ptr<train::Optimizer>>();
          return std::make_unique<train::Optimizer>(*shared);
        },
        nullptr);
  };
}

est::LossReduction ReductionOf(const std::string& r) {
  if (r == "weighted_sum") return est::LossReduction::kSum;
  if (r == "weighted_sum_over_batch_size") return est::LossReduction::kSumOverBatchSize;
  throw py::value_error("Unsupported loss_reduction '" + r +
                        "': dflow's canned estimators take SUM or SUM_OVER_BATCH_SIZE");
}

// ---- hooks ----

// A session of the estimator's loop lent to Python hooks: valid until the loop drops it.
struct LentState {
  std::shared_mutex mu;
  const ClientSession* session = nullptr;
  void Invalidate() {
    std::unique_lock<std::shared_mutex> l(mu);
    session = nullptr;
  }
};
struct LentSession {
  std::shared_ptr<LentState> state;
};
// The step a Python hook's before_run/after_run sees.
struct HookRunContext {
  train::SessionRunContext* ctx = nullptr;
};

[[noreturn]] void ThrowLentClosed() {
  PyErr_SetString(PyExc_RuntimeError, "The estimator's session is gone (the loop closed it).");
  throw py::error_already_set();
}

py::list RunLent(LentState& st, py::list feeds, py::list fetches, py::list targets, int64_t timeout_ms) {
  RunArgs args = ToRunArgs(feeds, fetches, targets, /*graph=*/std::nullopt);
  StatusOr<std::vector<Tensor>> result = RunLentStep(st.mu, st.session, args, timeout_ms, /*cancel=*/nullptr);
  if (!result.ok()) {
    if (st.session == nullptr) ThrowLentClosed();
    ThrowStatus(result.status());
  }
  return ToNumpyList(*std::move(result));
}

// Runs a hook given from Python in the C++ estimator loop, through its Python bridge
// (estimator.py _HookBridge): begin() runs in the graph of the call and may hand back C++ hooks
// (tf.train.StopAtStepHook and the other hooks the library runs in C++), which this adapter then
// runs without Python; a hook written in Python has its per-step methods called with the GIL.
class PyEstimatorHook : public train::SessionRunHook {
 public:
  explicit PyEstimatorHook(PyFn bridge) : bridge_(std::move(bridge)) {}

  Status Begin() override {
    std::vector<std::shared_ptr<train::SessionRunHook>> inner;
    bool python = false;
    bool ok = CallPython<bool>(
        [&] {
          py::tuple r = bridge_->attr("begin")().cast<py::tuple>();
          for (py::handle h : r[0]) inner.push_back(h.cast<std::shared_ptr<train::SessionRunHook>>());
          python = r[1].cast<bool>();
          return true;
        },
        false);
    if (!ok) return PythonRaised("hook's begin()");
    inner_ = std::move(inner);
    python_ = python;
    for (auto& h : inner_) RETURN_IF_ERROR(h->Begin());
    return absl::OkStatus();
  }

  Status AfterCreateSession(ClientSession* session, train::Coordinator* coord) override {
    for (auto& h : inner_) RETURN_IF_ERROR(h->AfterCreateSession(session, coord));
    if (!python_) return absl::OkStatus();
    return Call("after_create_session()", [&] { bridge_->attr("after_create_session")(Lend(session)); });
  }

  StatusOr<train::SessionRunArgs> BeforeRun(train::SessionRunContext* ctx) override {
    train::SessionRunArgs all;
    counts_.clear();
    for (auto& h : inner_) {
      ASSIGN_OR_RETURN(train::SessionRunArgs a, h->BeforeRun(ctx));
      counts_.push_back(a.fetches.size());
      all.fetches.insert(all.fetches.end(), a.fetches.begin(), a.fetches.end());
      for (auto& [k, v] : a.feeds) all.feeds.insert_or_assign(k, v);
      all.targets.insert(all.targets.end(), a.targets.begin(), a.targets.end());
    }
    python_fetches_ = 0;
    if (!python_) return all;
    RETURN_IF_ERROR(Call("before_run()", [&] {
      py::object r = bridge_->attr("before_run")(HookRunContext{ctx}, Lend(ctx->session()));
      if (r.is_none()) return;
      py::tuple t = r.cast<py::tuple>();
      for (py::handle f : t[0]) {
        all.fetches.push_back(f.cast<const OutputRef&>().out);
        ++python_fetches_;
      }
      for (py::handle f : t[1]) {
        py::tuple pair = py::reinterpret_borrow<py::tuple>(f);
        const OutputRef& o = pair[0].cast<const OutputRef&>();
        all.feeds.insert_or_assign(o.out, Input::Initializer(ToTensor(pair[1], o.out.dtype())));
      }
      for (py::handle n : t[2]) all.targets.push_back(n.cast<const NodeRef&>().op());
    }));
    return all;
  }

  Status AfterRun(train::SessionRunContext* ctx, const train::SessionRunValues& values) override {
    size_t off = 0;
    for (size_t i = 0; i < inner_.size(); ++i) {
      train::SessionRunValues v;
      for (size_t j = 0; j < counts_[i] && off + j < values.results.size(); ++j)
        v.results.push_back(values.results[off + j]);
      v.run_metadata = values.run_metadata;
      off += counts_[i];
      RETURN_IF_ERROR(inner_[i]->AfterRun(ctx, v));
    }
    if (!python_) return absl::OkStatus();
    return Call("after_run()", [&] {
      py::list results;
      for (size_t j = 0; j < python_fetches_ && off + j < values.results.size(); ++j) {
        results.append(ToNumpy(values.results[off + j]));
      }
      bridge_->attr("after_run")(HookRunContext{ctx}, Lend(ctx->session()), results);
    });
  }

  Status End(ClientSession* session) override {
    for (auto& h : inner_) RETURN_IF_ERROR(h->End(session));
    Status s;
    if (python_) s = Call("end()", [&] { bridge_->attr("end")(Lend(session)); });
    if (state_ != nullptr) state_->Invalidate();
    return s;
  }

  ~PyEstimatorHook() override {
    if (state_ != nullptr) state_->Invalidate();
  }

 private:
  template <typename F>
  Status Call(const char* what, F&& f) {
    bool ok = CallPython<bool>(
        [&] {
          f();
          return true;
        },
        false);
    return ok ? absl::OkStatus() : PythonRaised(what);
  }
  // The lent session for `s` (a new one when the loop made another session). Called with the GIL.
  LentSession Lend(const ClientSession* s) {
    if (state_ == nullptr || state_->session != s) {
      if (state_ != nullptr) state_->Invalidate();
      state_ = std::make_shared<LentState>();
      state_->session = s;
    }
    return LentSession{state_};
  }

  PyFn bridge_;
  std::vector<std::shared_ptr<train::SessionRunHook>> inner_;
  bool python_ = false;
  std::vector<size_t> counts_;
  size_t python_fetches_ = 0;
  std::shared_ptr<LentState> state_;
};

// Ctrl-C during an estimator call on the main thread: a C handler notes it, and this hook ends
// the loop at the next step boundary; the binding then runs Python's SIGINT handler
// (KeyboardInterrupt by default).
std::thread::id g_main_thread;
std::atomic<bool> g_interrupted{false};
void OnSigint(int) { g_interrupted.store(true); }

class InterruptHook : public train::SessionRunHook {
 public:
  StatusOr<train::SessionRunArgs> BeforeRun(train::SessionRunContext*) override {
    if (g_interrupted.load()) return Status(absl::StatusCode::kUnknown, "Interrupted (Ctrl-C)");
    return train::SessionRunArgs();
  }
  Status AfterRun(train::SessionRunContext* ctx, const train::SessionRunValues&) override {
    if (g_interrupted.load()) return Status(absl::StatusCode::kUnknown, "Interrupted (Ctrl-C)");
    return absl::OkStatus();
  }
};

class SigintScope {
 public:
  SigintScope() {
    active_ = std::this_thread::get_id() == g_main_thread;
    if (!active_) return;
    g_interrupted.store(false);
    struct sigaction sa = {};
    sa.sa_handler = OnSigint;
    sigemptyset(&sa.sa_mask);
    installed_ = sigaction(SIGINT, &sa, &old_) == 0;
  }
  ~SigintScope() {
    if (installed_) sigaction(SIGINT, &old_, nullptr);
  }
  // Runs Python's SIGINT handler when Ctrl-C came during the call (raising what it raises).
  void RaiseIfInterrupted() {
    if (!active_ || !g_interrupted.exchange(false)) return;
    if (installed_) {
      sigaction(SIGINT, &old_, nullptr);
      installed_ = false;
    }
    PyErr_SetInterrupt();
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }

 private:
  bool active_ = false;
  bool installed_ = false;
  struct sigaction old_ = {};
};

bool IsCppHook(py::handle h) {
  return py::detail::get_type_info(typeid(train::SessionRunHook)) != nullptr &&
         py::isinstance<train::SessionRunHook>(h);
}

// The hooks of a call: C++ hooks as they are, Python bridges adapted; then the interrupt hook.
std::vector<std::shared_ptr<train::SessionRunHook>> HooksOf(const py::list& hooks, bool interrupt = true) {
  std::vector<std::shared_ptr<train::SessionRunHook>> out;
  for (py::handle h : hooks) {
    if (IsCppHook(h)) {
      out.push_back(h.cast<std::shared_ptr<train::SessionRunHook>>());
    } else {
      out.push_back(std::make_shared<PyEstimatorHook>(Keep(py::reinterpret_borrow<py::object>(h))));
    }
  }
  if (interrupt) out.push_back(std::make_shared<InterruptHook>());
  return out;
}

struct EstimatorHandle {
  std::unique_ptr<est::Estimator> est;
  est::Estimator& get() {
    if (!est) ThrowStatus(errors::FailedPrecondition("The estimator is closed"));
    return *est;
  }
};

// Runs an estimator call without the GIL, then raises KeyboardInterrupt for a Ctrl-C, what a
// Python callback raised, or (left to the caller) the call's error.
const Status& StatusOf(const Status& s) { return s; }
template <typename T>
const Status& StatusOf(const StatusOr<T>& s) {
  return s.status();
}

template <typename T, typename F>
T RunReleased(F&& call) {
  std::optional<T> r;
  SigintScope sigint;
  {
    py::gil_scoped_release release;
    r.emplace(call());
  }
  sigint.RaiseIfInterrupted();
  if (StatusOf(*r).ok()) {
    Pending().reset();  // an exception the loop took as the end (an OutOfRangeError from a hook)
  } else {
    RaisePending();
  }
  return *std::move(r);
}

py::dict EvalResultToPy(const est::EvalResult& r) {
  py::dict d;
  for (const auto& [k, v] : r) d[py::str(k)] = v;
  return d;
}

void BindEstimators(py::module_& m) {
  g_main_thread = std::this_thread::get_id();
  BindLentSession<LentSession>(m, "EstimatorSession", "The estimator's loop closes it.", RunLent, ThrowLentClosed);
  py::class_<HookRunContext>(m, "EstimatorRunContext")
      .def("request_stop", [](HookRunContext& c) { c.ctx->RequestStop(); })
      .def_property_readonly("stop_requested", [](const HookRunContext& c) { return c.ctx->stop_requested(); })
      .def_property_readonly("id", [](const HookRunContext& c) { return reinterpret_cast<uintptr_t>(c.ctx); });

  py::class_<est::RunConfig>(m, "RunConfig")
      .def(py::init<>())
      .def_static("from_tf_config",
                  [](const std::string& tf_config) {
                    return ValueOrThrow(est::RunConfig::FromArgs({}, tf_config, nullptr));
                  })
      .def_readwrite("model_dir", &est::RunConfig::model_dir)
      .def_readwrite("tf_random_seed", &est::RunConfig::tf_random_seed)
      .def_readwrite("save_checkpoints_steps", &est::RunConfig::save_checkpoints_steps)
      .def_readwrite("save_checkpoints_secs", &est::RunConfig::save_checkpoints_secs)
      .def_readwrite("keep_checkpoint_max", &est::RunConfig::keep_checkpoint_max)
      .def_readwrite("save_summary_steps", &est::RunConfig::save_summary_steps)
      .def_readwrite("log_step_count_steps", &est::RunConfig::log_step_count_steps)
      .def_readwrite("startup_wait_secs", &est::RunConfig::startup_wait_secs)
      .def_readwrite("max_wait_secs", &est::RunConfig::max_wait_secs)
      .def("set_log",
           [](est::RunConfig& c, py::object fn) {
             if (fn.is_none()) {
               c.log = nullptr;
               return;
             }
             PyFn f = Keep(std::move(fn));
             c.log = [f](const std::string& line) {
               CallPython<bool>(
                   [&] {
                     (*f)(line);
                     return true;
                   },
                   false);
             };
           })
      .def_property_readonly("distributed", &est::RunConfig::distributed)
      .def_property_readonly("is_chief", &est::RunConfig::is_chief)
      .def_property_readonly("task_type", &est::RunConfig::task_type)
      .def_property_readonly("task_id", &est::RunConfig::task_id)
      .def_property_readonly("num_ps_replicas", &est::RunConfig::num_ps_replicas)
      .def_property_readonly("num_worker_replicas", &est::RunConfig::num_worker_replicas)
      .def_property_readonly("cluster", [](const est::RunConfig& c) {
        py::dict d;
        if (!c.task) return d;
        for (const auto& [job, tasks] : c.task->cluster.jobs()) {
          py::dict t;
          for (const auto& [i, addr] : tasks) t[py::int_(i)] = addr;
          d[py::str(job)] = t;
        }
        return d;
      });

  py::class_<EstimatorHandle>(m, "Estimator")
      .def_property_readonly("model_dir", [](EstimatorHandle& h) { return h.get().model_dir(); })
      .def_property_readonly("global_step", [](EstimatorHandle& h) { return h.get().global_step(); })
      .def("latest_checkpoint", [](EstimatorHandle& h) { return ValueOrThrow(h.get().LatestCheckpoint()); })
      .def("train",
           [](EstimatorHandle& h, py::object input_fn, int64_t steps, int64_t max_steps, py::list hooks,
              py::list chief_only_hooks) {
             est::Estimator& e = h.get();
             est::InputFn in = InputFnOf(std::move(input_fn));
             est::TrainOptions o;
             o.steps = steps;
             o.max_steps = max_steps;
             o.hooks = HooksOf(hooks);
             o.chief_only_hooks = HooksOf(chief_only_hooks, false);
             Status s = RunReleased<Status>([&] { return e.Train(in, o); });
             ThrowIfError(s);
             return e.global_step();
           })
      .def("evaluate",
           [](EstimatorHandle& h, py::object input_fn, int64_t steps, py::list hooks,
              const std::string& checkpoint_path, const std::string& name) {
             est::Estimator& e = h.get();
             est::InputFn in = InputFnOf(std::move(input_fn));
             est::EvalOptions o;
             o.steps = steps;
             o.hooks = HooksOf(hooks);
             o.checkpoint_path = checkpoint_path;
             o.name = name;
             est::EvalResult r =
                 ValueOrThrow(RunReleased<StatusOr<est::EvalResult>>([&] { return e.Evaluate(in, o); }));
             return EvalResultToPy(r);
           })
      .def("predict",
           [](EstimatorHandle& h, py::object input_fn, std::vector<std::string> keys, py::list hooks,
              const std::string& checkpoint_path) {
             est::Estimator& e = h.get();
             est::InputFn in = InputFnOf(std::move(input_fn));
             est::PredictOptions o;
             o.predict_keys = std::move(keys);
             o.hooks = HooksOf(hooks);
             o.checkpoint_path = checkpoint_path;
             std::vector<est::Prediction> r =
                 ValueOrThrow(RunReleased<StatusOr<std::vector<est::Prediction>>>([&] { return e.Predict(in, o); }));
             py::list out;
             for (est::Prediction& p : r) {
               py::dict d;
               for (auto& [k, v] : p) d[py::str(k)] = ToNumpy(std::move(v));
               out.append(d);
             }
             return out;
           })
      .def("export_saved_model",
           [](EstimatorHandle& h, const std::string& export_dir_base, py::object receiver_fn,
              const std::string& checkpoint_path, bool as_text) {
             // receiver_fn(scope) returns (features {name: Output}, receiver_tensors {name: Output}).
             est::Estimator& e = h.get();
             PyFn f = Keep(std::move(receiver_fn));
             est::ServingInputReceiverFn fn = [f](const Scope& s) -> StatusOr<est::ServingInputReceiver> {
               std::optional<est::ServingInputReceiver> r = CallPython<std::optional<est::ServingInputReceiver>>(
                   [&]() -> std::optional<est::ServingInputReceiver> {
                     py::tuple t = (*f)(s).cast<py::tuple>();
                     est::ServingInputReceiver out;
                     out.features = FeaturesOf(t[0].cast<py::dict>());
                     out.receiver_tensors = FeaturesOf(t[1].cast<py::dict>());
                     return out;
                   },
                   std::nullopt);
               if (!r.has_value()) return PythonRaised("serving_input_receiver_fn");
               return *std::move(r);
             };
             est::ExportOptions o;
             o.checkpoint_path = checkpoint_path;
             o.as_text = as_text;
             return ValueOrThrow(RunReleased<StatusOr<std::string>>([&] {
               return e.ExportSavedModel(export_dir_base, fn, o);
             }));
           })
      .def("notify_job_complete",
           [](EstimatorHandle& h) {
             est::Estimator& e = h.get();
             Status s;
             {
               py::gil_scoped_release release;
               s = e.NotifyJobComplete();
             }
             ThrowIfError(s);
           })
      .def("close", [](EstimatorHandle& h) {
        std::unique_ptr<est::Estimator> e = std::move(h.est);
        py::gil_scoped_release release;
        e.reset();
      });

  m.def("custom_estimator", [](py::object model_fn, const est::RunConfig& config) {
    return EstimatorHandle{std::make_unique<est::Estimator>(ModelFnOf(std::move(model_fn)), config)};
  });
  m.def("dnn_estimator",
        [](bool classifier, int64_t n, const std::vector<int64_t>& hidden_units, const std::vector<ColumnRef>& columns,
           py::object activation_fn, double dropout, py::object optimizer, double learning_rate,
           const std::string& loss_reduction, const est::RunConfig& config) {
          est::DNNOptions o;
          o.hidden_units = hidden_units;
          o.feature_columns = ColumnsOf(columns);
          o.activation_fn = UnaryBuilder(std::move(activation_fn), "activation_fn");
          o.dropout = dropout;
          o.optimizer = OptimizerFnOf(std::move(optimizer), learning_rate);
          o.loss_reduction = ReductionOf(loss_reduction);
          est::ModelFn fn = classifier ? est::DNNClassifierModelFn(o, n) : est::DNNRegressorModelFn(o, n);
          return EstimatorHandle{std::make_unique<est::Estimator>(std::move(fn), config)};
        });
  m.def("linear_estimator", [](bool classifier, int64_t n, const std::vector<ColumnRef>& columns,
                               const std::string& sparse_combiner, py::object optimizer, double learning_rate,
                               const std::string& loss_reduction, const est::RunConfig& config) {
    est::LinearOptions o;
    o.feature_columns = ColumnsOf(columns);
    o.sparse_combiner = sparse_combiner;
    o.optimizer = OptimizerFnOf(std::move(optimizer), learning_rate);
    o.loss_reduction = ReductionOf(loss_reduction);
    est::ModelFn fn = classifier ? est::LinearClassifierModelFn(o, n) : est::LinearRegressorModelFn(o, n);
    return EstimatorHandle{std::make_unique<est::Estimator>(std::move(fn), config)};
  });

  m.def("train_and_evaluate", [](EstimatorHandle& h, py::object train_input_fn, int64_t max_steps, py::list train_hooks,
                                 py::object eval_input_fn, int64_t eval_steps, int64_t throttle_secs,
                                 int64_t checkpoint_timeout_secs, py::list eval_hooks) {
    est::Estimator& e = h.get();
    est::TrainSpec ts;
    ts.input_fn = InputFnOf(std::move(train_input_fn));
    ts.max_steps = max_steps;
    ts.hooks = HooksOf(train_hooks);
    est::EvalSpec es;
    es.input_fn = InputFnOf(std::move(eval_input_fn));
    es.steps = eval_steps;
    es.throttle_secs = throttle_secs;
    es.checkpoint_timeout_secs = checkpoint_timeout_secs;
    es.hooks = HooksOf(eval_hooks);
    est::EvalResult r =
        ValueOrThrow(RunReleased<StatusOr<est::EvalResult>>([&] { return est::TrainAndEvaluate(e, ts, es); }));
    return EvalResultToPy(r);
  });
  m.def("run_parameter_server", [](const est::RunConfig& config) {
    Status s;
    {
      py::gil_scoped_release release;
      s = est::RunParameterServer(config);
    }
    ThrowIfError(s);
  });
}

}  // namespace

void BindEstimator(py::module_& m) {
  BindFeatureColumns(m);
  BindEstimators(m);
}

}  // namespace dflow::python
