// Feature columns and estimators for the Python package: dflow::feature_column and
// dflow::estimator bound as they are.
//
// Python functions that the C++ side calls while it builds (a numeric column's normalizer_fn, a
// DNN's activation_fn, an estimator's input_fn and model_fn, a canned estimator's optimizer
// factory) are called with the GIL taken, in the Scope C++ gives them (the Python layer builds
// there through dflow.data.scope_graph). An exception such a function raises is kept, the C++
// call fails, and the binding raises the kept exception unchanged when the call returns.
//
// Estimator calls (train, evaluate, predict, train_and_evaluate) release the GIL while the C++
// loop runs.
#include <optional>

#include "api/scope_internal.h"
#include "binding.h"
#include "dflow/estimator.h"
#include "dflow/feature_column.h"
#include "dflow/train.h"
#include "distributed/cluster_spec.h"

namespace dflow::python {
namespace {

namespace fc = feature_column;
namespace est = estimator;

// ---- Python functions called from C++ ----

// The first exception a callback raised on this thread, until the binding raises it.
std::optional<py::error_already_set>& Pending() {
  thread_local std::optional<py::error_already_set> pending;
  return pending;
}

// Raises the pending exception (clearing the build error of `g` that it caused), if any.
void RaisePending(Graph* g = nullptr) {
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
using PyFn = std::shared_ptr<py::object>;
PyFn Keep(py::object fn) {
  return PyFn(new py::object(std::move(fn)), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
}

// Runs `call` with the GIL; an exception it raises becomes Pending() and `failed` is returned.
template <typename T, typename F>
T CallPython(F&& call, T failed) {
  py::gil_scoped_acquire gil;
  try {
    return call();
  } catch (py::error_already_set& e) {
    if (!Pending().has_value()) Pending().emplace(std::move(e));
  } catch (py::cast_error& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
    if (!Pending().has_value()) Pending().emplace();
  } catch (py::builtin_exception& e) {
    e.set_error();
    if (!Pending().has_value()) Pending().emplace();
  }
  return failed;
}

Status PythonRaised(const char* what) {
  return errors::Cancelled("The Python ", what, " raised an exception");
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

// ---- feature columns ----

struct ColumnRef {
  fc::Column column;
};

ColumnRef Checked(fc::Column c) {
  if (!c->status().ok()) ThrowStatus(c->status());
  return ColumnRef{std::move(c)};
}

std::vector<fc::Column> ColumnsOf(const std::vector<ColumnRef>& cols) {
  std::vector<fc::Column> out;
  for (const ColumnRef& c : cols) out.push_back(c.column);
  return out;
}

fc::Features FeaturesOf(const py::dict& d) {
  fc::Features f;
  for (auto [k, v] : d) f[k.cast<std::string>()] = v.cast<const OutputRef&>().out;
  return f;
}

init::Initializer InitializerOf(const py::dict& d) {
  std::string kind = d["kind"].cast<std::string>();
  double a = d.contains("a") ? d["a"].cast<double>() : 0.0;
  double b = d.contains("b") ? d["b"].cast<double>() : 1.0;
  int64_t seed = d.contains("seed") && !d["seed"].is_none() ? d["seed"].cast<int64_t>() : 0;
  if (kind == "zeros") return init::Zeros();
  if (kind == "ones") return init::Ones();
  if (kind == "constant") return init::Constant(Input::Initializer(ToTensor(d["value"], DT_FLOAT)));
  if (kind == "random_uniform") return init::RandomUniform(a, b, seed);
  if (kind == "random_normal") return init::RandomNormal(a, b, seed);
  if (kind == "truncated_normal") return init::TruncatedNormal(a, b, seed);
  if (kind == "glorot_uniform") return init::GlorotUniform(seed);
  throw py::value_error("Unknown initializer kind '" + kind + "'");
}

void BindFeatureColumns(py::module_& m) {
  py::class_<ColumnRef>(m, "FeatureColumn")
      .def_property_readonly("name", [](const ColumnRef& c) { return c.column->name(); })
      .def_property_readonly("is_dense", [](const ColumnRef& c) { return c.column->is_dense(); })
      .def_property_readonly("dense_dimension", [](const ColumnRef& c) { return c.column->dense_dimension(); })
      .def_property_readonly("is_categorical", [](const ColumnRef& c) { return c.column->is_categorical(); })
      .def_property_readonly("num_buckets", [](const ColumnRef& c) { return c.column->num_buckets(); });

  m.def("numeric_column", [](const std::string& key, const std::vector<int64_t>& shape,
                             const std::vector<float>& default_value, int dtype, py::object normalizer_fn) {
    return Checked(fc::NumericColumn(key, shape, default_value, static_cast<DType>(dtype),
                                     UnaryBuilder(std::move(normalizer_fn), "normalizer_fn")));
  });
  m.def("bucketized_column", [](const ColumnRef& source, const std::vector<float>& boundaries) {
    return Checked(fc::BucketizedColumn(source.column, boundaries));
  });
  m.def("categorical_column_with_vocabulary_list_str",
        [](const std::string& key, const std::vector<std::string>& vocabulary, int64_t num_oov, int64_t default_value) {
          return Checked(fc::CategoricalColumnWithVocabularyList(key, vocabulary, num_oov, default_value));
        });
  m.def("categorical_column_with_vocabulary_list_int", [](const std::string& key, const std::vector<int64_t>& vocabulary,
                                                          int64_t num_oov, int64_t default_value, int dtype) {
    return Checked(fc::CategoricalColumnWithVocabularyList(key, vocabulary, num_oov, default_value,
                                                           static_cast<DType>(dtype)));
  });
  m.def("categorical_column_with_identity", [](const std::string& key, int64_t num_buckets, int64_t default_value) {
    return Checked(fc::CategoricalColumnWithIdentity(key, num_buckets, default_value));
  });
  m.def("categorical_column_with_hash_bucket", [](const std::string& key, int64_t size, int dtype) {
    return Checked(fc::CategoricalColumnWithHashBucket(key, size, static_cast<DType>(dtype)));
  });
  m.def("indicator_column", [](const ColumnRef& c) { return Checked(fc::IndicatorColumn(c.column)); });
  m.def("embedding_column", [](const ColumnRef& c, int64_t dimension, const std::string& combiner, py::object init) {
    if (init.is_none()) return Checked(fc::EmbeddingColumn(c.column, dimension, combiner));
    return Checked(fc::EmbeddingColumn(c.column, dimension, combiner, InitializerOf(init.cast<py::dict>())));
  });
  m.def("input_layer", [](const Scope& s, py::dict features, const std::vector<ColumnRef>& columns) {
    Output out = fc::InputLayer(s, FeaturesOf(features), ColumnsOf(columns));
    RaisePending(s.graph());
    ThrowIfBuildError(s.graph());
    return OutputRef{s.graph_as_shared_ptr(), out};
  });
  m.def("linear_model", [](const Scope& s, py::dict features, const std::vector<ColumnRef>& columns, int64_t units,
                           const std::string& sparse_combiner) {
    Output out = fc::LinearModel(s, FeaturesOf(features), ColumnsOf(columns), units, sparse_combiner);
    RaisePending(s.graph());
    ThrowIfBuildError(s.graph());
    return OutputRef{s.graph_as_shared_ptr(), out};
  });

  // The variables of the Scope's C++ collections (what the C++ builders registered), so that the
  // Python layer can list the ones it did not make itself.
  m.def("scope_collections", [](const Scope& s) {
    Scope::Collections* c = s.collections();
    auto refs = [&](const std::vector<Output>& v) {
      py::list l;
      for (const Output& o : v) l.append(OutputRef{s.graph_as_shared_ptr(), o});
      return l;
    };
    auto nodes = [&](const std::vector<Operation>& v) {
      py::list l;
      for (const Operation& o : v) l.append(NodeRef{s.graph_as_shared_ptr(), o.node()});
      return l;
    };
    py::dict d;
    d["global_variables"] = refs(c->global_variables);
    d["trainable_variables"] = refs(c->trainable_variables);
    d["local_variables"] = refs(c->local_variables);
    d["initializers"] = nodes(c->initializers);
    d["local_initializers"] = nodes(c->local_initializers);
    return d;
  });
}

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
          if (d.contains("train_op") && !d["train_op"].is_none()) spec.train_op = d["train_op"].cast<const NodeRef&>().op();
          if (d.contains("eval_metric_ops") && !d["eval_metric_ops"].is_none()) {
            for (auto [k, v] : d["eval_metric_ops"].cast<py::dict>()) {
              py::tuple t = v.cast<py::tuple>();
              spec.eval_metric_ops[k.cast<std::string>()] =
                  metrics::Metric{t[0].cast<const OutputRef&>().out, t[1].cast<const OutputRef&>().out};
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

std::vector<std::shared_ptr<train::SessionRunHook>> HooksOf(const py::list& hooks) {
  std::vector<std::shared_ptr<train::SessionRunHook>> out;
  for (py::handle h : hooks) {
    try {
      out.push_back(h.cast<std::shared_ptr<train::SessionRunHook>>());
    } catch (py::cast_error&) {
      throw py::type_error("Hooks must be dflow SessionRunHooks, got " + std::string(py::repr(h)));
    }
  }
  return out;
}

struct EstimatorHandle {
  std::unique_ptr<est::Estimator> est;
  est::Estimator& get() {
    if (!est) ThrowStatus(errors::FailedPrecondition("The estimator is closed"));
    return *est;
  }
};

// Runs an estimator call without the GIL, then raises what a Python callback raised, or the
// call's error.
template <typename T, typename F>
T RunReleased(F&& call) {
  std::optional<T> r;
  {
    py::gil_scoped_release release;
    r.emplace(call());
  }
  RaisePending();
  return *std::move(r);
}

py::dict EvalResultToPy(const est::EvalResult& r) {
  py::dict d;
  for (const auto& [k, v] : r) d[py::str(k)] = v;
  return d;
}

void BindEstimators(py::module_& m) {
  py::class_<est::RunConfig>(m, "RunConfig")
      .def(py::init<>())
      .def_static("from_tf_config", [](const std::string& tf_config) {
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
      .def("set_log", [](est::RunConfig& c, py::object fn) {
        if (fn.is_none()) {
          c.log = nullptr;
          return;
        }
        PyFn f = Keep(std::move(fn));
        c.log = [f](const std::string& line) {
          CallPython<bool>([&] { (*f)(line); return true; }, false);
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
      .def("train", [](EstimatorHandle& h, py::object input_fn, int64_t steps, int64_t max_steps, py::list hooks,
                       py::list chief_only_hooks) {
        est::Estimator& e = h.get();
        est::InputFn in = InputFnOf(std::move(input_fn));
        est::TrainOptions o;
        o.steps = steps;
        o.max_steps = max_steps;
        o.hooks = HooksOf(hooks);
        o.chief_only_hooks = HooksOf(chief_only_hooks);
        Status s = RunReleased<Status>([&] { return e.Train(in, o); });
        ThrowIfError(s);
        return e.global_step();
      })
      .def("evaluate", [](EstimatorHandle& h, py::object input_fn, int64_t steps, py::list hooks,
                          const std::string& checkpoint_path, const std::string& name) {
        est::Estimator& e = h.get();
        est::InputFn in = InputFnOf(std::move(input_fn));
        est::EvalOptions o;
        o.steps = steps;
        o.hooks = HooksOf(hooks);
        o.checkpoint_path = checkpoint_path;
        o.name = name;
        est::EvalResult r = ValueOrThrow(RunReleased<StatusOr<est::EvalResult>>([&] { return e.Evaluate(in, o); }));
        return EvalResultToPy(r);
      })
      .def("predict", [](EstimatorHandle& h, py::object input_fn, std::vector<std::string> keys, py::list hooks,
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
      .def("notify_job_complete", [](EstimatorHandle& h) {
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
  m.def("dnn_estimator", [](bool classifier, int64_t n, const std::vector<int64_t>& hidden_units,
                            const std::vector<ColumnRef>& columns, py::object activation_fn, double dropout,
                            py::object optimizer, double learning_rate, const std::string& loss_reduction,
                            const est::RunConfig& config) {
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

  m.def("train_and_evaluate", [](EstimatorHandle& h, py::object train_input_fn, int64_t max_steps,
                                 py::list train_hooks, py::object eval_input_fn, int64_t eval_steps,
                                 int64_t throttle_secs, int64_t checkpoint_timeout_secs, py::list eval_hooks) {
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
    est::EvalResult r = ValueOrThrow(
        RunReleased<StatusOr<est::EvalResult>>([&] { return est::TrainAndEvaluate(e, ts, es); }));
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
