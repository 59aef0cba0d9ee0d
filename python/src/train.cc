// State and training for the Python package: reference variables (registered in the Scope's
// collections as Variable::Create registers them, so that C++ initializers, savers and monitored
// sessions see them), symbolic gradients, tf.cond and tf.while_loop over C++ Cond/WhileLoop with
// Python branch functions, the tf.train optimizers, Saver and checkpoint reading, and summaries
// with their event files.
#include <algorithm>
#include <memory>
#include <optional>

#include "absl/strings/match.h"
#include "api/scope_internal.h"
#include "api/variable_internal.h"
#include "binding.h"
#include "dflow/control_flow.h"
#include "dflow/saver.h"
#include "dflow/summary.h"
#include "dflow/train.h"
#include "dflow/variable.h"
#include "graph/gradients.h"
#include "proto/event.pb.h"
#include "proto/graph.pb.h"
#include "tensor/tensor_bundle.h"
#include "train/checkpoint_state.h"
#include "train/optimizers.h"

namespace dflow::python {
namespace {

OutputRef Ref(const Scope& s, const Output& o) { return OutputRef{s.graph_as_shared_ptr(), o}; }
NodeOut ToNodeOut(const Output& o) { return NodeOut{o.node(), o.index()}; }

[[noreturn]] void Raise(PyObject* type, const std::string& msg) {
  PyErr_SetString(type, msg.c_str());
  throw py::error_already_set();
}

template <typename T>
void EraseValue(std::vector<T>* v, const T& x) {
  v->erase(std::remove(v->begin(), v->end(), x), v->end());
}

// ---- Variables ----

// Builds the reference variable `name` (exact) with the initial value `init` (built by the
// caller), its "<name>/Assign" and "<name>/read", as Variable::Create does, and registers it in
// the scope's collections: global (initializers, global variables, trainable when `trainable`) or
// local. Returns (ref, initializer, read).
py::tuple MakeVariable(const Scope& scope, const std::string& name, py::handle shape, int dtype, const OutputRef& init,
                       bool trainable, bool global, bool local, bool validate_shape) {
  Graph* g = scope.graph();
  ThrowIfBuildError(g);
  const DType dt = static_cast<DType>(dtype);
  const PartialTensorShape ps = ToShape(shape);
  Scope plain = ScopeAccess::WithoutControlDependencies(scope);
  Scope::Collections* c = scope.collections();
  const bool as_local = local && !global;
  Output ref, read;
  Operation initializer;
  auto full = ps.ToTensorShape();
  if (validate_shape && full.ok()) {
    Variable v = VariableAccess::Make(
        plain, name, *full, dt, [&](const Scope&) { return init.out; }, as_local);
    ThrowIfBuildError(g);
    if (!v.ref().valid()) ThrowStatus(errors::Internal("Building variable ", name, " failed without an error"));
    ref = v.ref();
    read = v.read();
    initializer = v.initializer();
    if (!as_local) {
      if (!trainable) EraseValue(&c->trainable_variables, ref);
      if (!global) {
        EraseValue(&c->global_variables, ref);
        EraseValue(&c->initializers, initializer);
        EraseValue(&c->trainable_variables, ref);
      }
    }
  } else {
    // A shape that is not fully defined (validate_shape=False): built here in the same layout.
    ref = ops::VariableV2(ScopeAccess::WithPrefix(plain, "").WithOpName(name).WithDevice(plain.device()), ps, dt);
    ThrowIfBuildError(g);
    Scope own = ScopeAccess::ColocatedWith(ScopeAccess::WithPrefix(plain, name + "/"), ref.node());
    initializer = ops::BuildOp(own.WithOpName("Assign"), "Assign", {ref, init.out},
                               {{"validate_shape", validate_shape}});
    ThrowIfBuildError(g);
    read = ops::Identity(own.WithOpName("read"), ref);
    ThrowIfBuildError(g);
    if (as_local) {
      c->local_initializers.push_back(initializer);
      c->local_variables.push_back(ref);
    } else if (global) {
      c->initializers.push_back(initializer);
      c->global_variables.push_back(ref);
      if (trainable) c->trainable_variables.push_back(ref);
    }
  }
  return py::make_tuple(Ref(scope, ref), NodeRef{scope.graph_as_shared_ptr(), initializer.node()}, Ref(scope, read));
}

// ---- Gradients ----

// Whether a gradient can flow from `x` to any of `ys`: x's node is an ancestor of a y along data
// edges that do not pass through an op declared to have no gradient (StopGradient, Shape, ...).
std::vector<bool> Connected(Graph* g, const std::vector<Output>& ys, const std::vector<Output>& xs) {
  std::vector<char> seen(g->num_node_ids(), 0);
  std::vector<const Node*> stack;
  for (const Output& y : ys) {
    if (!seen[y.node()->id()]) {
      seen[y.node()->id()] = 1;
      stack.push_back(y.node());
    }
  }
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    bool no_gradient = false;
    LookupGradient(n->op(), &no_gradient);
    if (no_gradient) continue;
    for (const Edge* e : n->data_inputs()) {
      if (e != nullptr && !seen[e->src->id()]) {
        seen[e->src->id()] = 1;
        stack.push_back(e->src);
      }
    }
  }
  std::vector<bool> out;
  for (const Output& x : xs) out.push_back(seen[x.node()->id()] != 0);
  return out;
}

py::list AddGradientsPy(const Scope& scope, const std::vector<OutputRef>& ys, const std::vector<OutputRef>& xs,
                        const std::vector<OutputRef>& grad_ys, const std::string& prefix) {
  Graph* g = scope.graph();
  ThrowIfBuildError(g);
  std::vector<Output> y, x;
  for (const OutputRef& o : ys) y.push_back(o.out);
  for (const OutputRef& o : xs) x.push_back(o.out);
  std::vector<bool> connected = Connected(g, y, x);
  std::vector<NodeOut> ny, nx, ngy;
  for (const Output& o : y) ny.push_back(ToNodeOut(o));
  for (size_t i = 0; i < x.size(); ++i)
    if (connected[i]) nx.push_back(ToNodeOut(x[i]));
  for (const OutputRef& o : grad_ys) ngy.push_back(ToNodeOut(o.out));
  std::vector<NodeOut> grads;
  if (!nx.empty()) {
    auto r = AddGradients(g, ny, nx, ngy, prefix, scope.device());
    if (!r.ok()) {
      if (absl::StrContains(r.status().message(), "No gradient defined")) {
        Raise(PyExc_LookupError, std::string(r.status().message()));
      }
      ThrowStatus(r.status());
    }
    grads = std::move(*r);
  }
  py::list out;
  size_t next = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!connected[i]) {
      out.append(py::none());
      continue;
    }
    const NodeOut& gr = grads[next++];
    if (gr.node == nullptr) out.append(py::none());
    else out.append(Ref(scope, Output(gr.node, gr.index)));
  }
  return out;
}

// ---- Control flow with Python functions ----

// The first Python exception raised by a function called while C++ builds a cond or loop. The
// builder is told through the scope (an error status) and stops; the exception is raised again
// once it has returned.
struct PendingError {
  std::optional<py::error_already_set> error;

  // Records the exception being handled and marks the scope failed.
  void Keep(const Scope& s, py::error_already_set&& e) {
    if (!error) error.emplace(std::move(e));
    s.UpdateStatus(errors::Aborted("A Python function raised an exception while building"));
  }
  void KeepMessage(const Scope& s, PyObject* type, const std::string& msg) {
    PyErr_SetString(type, msg.c_str());
    Keep(s, py::error_already_set());
  }
  // After the builder returned: raises the kept exception (dropping the status it caused), or
  // the builder's own error.
  void RaiseIfAny(Graph* g) {
    if (error) {
      g->TakeBuildError().IgnoreError();
      py::error_already_set e = std::move(*error);
      error.reset();
      throw e;
    }
    ThrowIfBuildError(g);
  }
};

py::list OutputList(const Scope& s, const std::vector<Output>& v) {
  py::list l;
  for (const Output& o : v) l.append(Ref(s, o));
  return l;
}

bool ToOutputs(const Scope& s, py::handle r, std::vector<Output>* out, PendingError* pending) {
  try {
    for (py::handle h : r) {
      if (!py::isinstance<OutputRef>(h)) {
        pending->KeepMessage(s, PyExc_TypeError,
                             "A branch or loop body must return tensors, got " +
                                 std::string(py::repr(h)).substr(0, 200));
        return false;
      }
      out->push_back(h.cast<const OutputRef&>().out);
    }
  } catch (py::error_already_set& e) {
    pending->Keep(s, std::move(e));
    return false;
  }
  return true;
}

BranchFn PyBranch(py::function fn, std::shared_ptr<PendingError> pending) {
  return [fn = std::move(fn), pending](const Scope& s, const std::vector<Output>& in) -> std::vector<Output> {
    if (pending->error) {
      s.UpdateStatus(errors::Aborted("A Python function raised an exception while building"));
      return {};
    }
    std::vector<Output> out;
    try {
      py::object r = fn(s, OutputList(s, in));
      if (!ToOutputs(s, r, &out, pending.get())) return {};
    } catch (py::error_already_set& e) {
      pending->Keep(s, std::move(e));
      return {};
    }
    return out;
  };
}

py::list CondPy(const Scope& scope, const OutputRef& pred, const std::vector<OutputRef>& inputs, py::function then_fn,
                py::function else_fn) {
  Graph* g = scope.graph();
  ThrowIfBuildError(g);
  auto pending = std::make_shared<PendingError>();
  std::vector<Output> in;
  for (const OutputRef& o : inputs) in.push_back(o.out);
  std::vector<Output> out = Cond(scope, pred.out, in, PyBranch(std::move(then_fn), pending),
                                 PyBranch(std::move(else_fn), pending));
  pending->RaiseIfAny(g);
  return OutputList(scope, out);
}

py::list WhileLoopPy(const Scope& scope, const std::vector<OutputRef>& loop_vars, py::function cond_fn,
                     py::function body_fn, const std::string& name) {
  Graph* g = scope.graph();
  ThrowIfBuildError(g);
  auto pending = std::make_shared<PendingError>();
  std::vector<Output> vars;
  for (const OutputRef& o : loop_vars) vars.push_back(o.out);
  LoopCondFn cond = [&, pending](const Scope& s, const std::vector<Output>& in) -> Output {
    if (pending->error) return Output();
    try {
      py::object r = cond_fn(s, OutputList(s, in));
      if (!py::isinstance<OutputRef>(r)) {
        pending->KeepMessage(s, PyExc_TypeError,
                             "The loop condition must return a boolean tensor, got " +
                                 std::string(py::repr(r)).substr(0, 200));
        return Output();
      }
      return r.cast<const OutputRef&>().out;
    } catch (py::error_already_set& e) {
      pending->Keep(s, std::move(e));
      return Output();
    }
  };
  std::vector<Output> out = WhileLoop(scope, vars, cond, PyBranch(std::move(body_fn), pending), name);
  pending->RaiseIfAny(g);
  return OutputList(scope, out);
}

// ---- Optimizers ----

// A train::Optimizer over any optimizers:: implementation (TensorFlow's `name` argument names
// its ops and slots). The pybind type is train::Optimizer, so that other parts of the extension
// (SyncReplicasOptimizer) take it as the C++ API's optimizer.
class PyOptimizer : public train::Optimizer {
 public:
  explicit PyOptimizer(std::shared_ptr<optimizers::Optimizer> impl,
                       std::shared_ptr<optimizers::AdamOptimizer> adam = nullptr)
      : adam_(std::move(adam)) {
    Init(std::move(impl), absl::OkStatus());
  }
  const std::shared_ptr<optimizers::AdamOptimizer>& adam() const { return adam_; }

 private:
  std::shared_ptr<optimizers::AdamOptimizer> adam_;
};

optimizers::HyperParam Hyper(py::handle v, const char* what) {
  if (py::isinstance<OutputRef>(v)) return optimizers::HyperParam(ToNodeOut(v.cast<const OutputRef&>().out));
  try {
    return optimizers::HyperParam(v.cast<double>());
  } catch (py::cast_error&) {
    throw py::type_error(std::string("Optimizer hyperparameter '") + what + "' must be a number or a tensor, got " +
                         std::string(py::repr(v)).substr(0, 200));
  }
}

std::shared_ptr<train::Optimizer> Wrap(std::shared_ptr<optimizers::Optimizer> impl) {
  return std::make_shared<PyOptimizer>(std::move(impl));
}

py::list ComputeGradientsPy(train::Optimizer& opt, const Scope& scope, const OutputRef& loss,
                            const std::vector<OutputRef>& var_list) {
  Graph* g = scope.graph();
  ThrowIfBuildError(g);
  std::vector<Output> vars;
  for (const OutputRef& v : var_list) vars.push_back(v.out);
  auto gvs = opt.ComputeGradients(scope, loss.out, vars);
  ThrowIfBuildError(g);
  py::list out;
  for (const auto& [gr, v] : gvs) {
    out.append(py::make_tuple(gr.valid() ? py::cast(Ref(scope, gr)) : py::object(py::none()), Ref(scope, v)));
  }
  return out;
}

// Applies the pairs; returns (the op, the variables it created as (ref, initializer) pairs).
py::tuple ApplyGradientsPy(train::Optimizer& opt, const Scope& scope, py::list grads_and_vars, py::object global_step) {
  Graph* g = scope.graph();
  ThrowIfBuildError(g);
  std::vector<std::pair<Output, Output>> gvs;
  for (py::handle h : grads_and_vars) {
    py::tuple t = py::reinterpret_borrow<py::tuple>(h);
    Output gr = t[0].is_none() ? Output() : t[0].cast<const OutputRef&>().out;
    gvs.emplace_back(gr, t[1].cast<const OutputRef&>().out);
  }
  Output step = global_step.is_none() ? Output() : global_step.cast<const OutputRef&>().out;
  Scope::Collections* c = scope.collections();
  const size_t vars_before = c->global_variables.size();
  const size_t inits_before = c->initializers.size();
  Operation op = opt.ApplyGradients(scope, gvs, step);
  py::list created;
  for (size_t i = vars_before; i < c->global_variables.size(); ++i) {
    const Output& v = c->global_variables[i];
    py::object init = py::none();
    for (size_t j = inits_before; j < c->initializers.size(); ++j) {
      Node* a = c->initializers[j].node();
      if (a != nullptr && a->num_inputs() > 0 && a->data_inputs()[0] != nullptr &&
          a->data_inputs()[0]->src == v.node()) {
        init = py::cast(NodeRef{scope.graph_as_shared_ptr(), a});
        break;
      }
    }
    created.append(py::make_tuple(Ref(scope, v), init));
  }
  ThrowIfBuildError(g);
  return py::make_tuple(NodeRef{scope.graph_as_shared_ptr(), op.node()}, created);
}

// ---- Checkpoints ----

struct SaverHandle {
  train::Saver saver;
  std::shared_ptr<Graph> graph;
};

struct CheckpointReader {
  std::unique_ptr<BundleReader> reader;
};

py::object CheckpointStateOf(const std::string& dir, const std::string& latest_filename) {
  auto st = train::ReadCheckpointState(Env::Default(), dir, latest_filename);
  if (!st.ok()) {
    if (absl::IsNotFound(st.status())) return py::none();
    ThrowStatus(st.status());
  }
  py::dict d;
  d["model_checkpoint_path"] = st->model_checkpoint_path();
  py::list paths, times;
  for (const auto& p : st->all_model_checkpoint_paths()) paths.append(p);
  for (double t : st->all_model_checkpoint_timestamps()) times.append(t);
  d["all_model_checkpoint_paths"] = paths;
  d["all_model_checkpoint_timestamps"] = times;
  d["last_preserved_timestamp"] = st->last_preserved_timestamp();
  return d;
}

}  // namespace

void BindTrain(py::module_& m) {
  // Variables.
  m.def("make_variable", &MakeVariable, py::arg("scope"), py::arg("name"), py::arg("shape"), py::arg("dtype"),
        py::arg("initial_value"), py::arg("trainable"), py::arg("global_"), py::arg("local"),
        py::arg("validate_shape"));
  m.def("report_uninitialized_variables", [](const Scope& scope, const std::vector<OutputRef>& vars) {
    std::vector<Output> v;
    for (const OutputRef& o : vars) v.push_back(o.out);
    Output r = ReportUninitializedVariables(scope, v);
    ThrowIfBuildError(scope.graph());
    return Ref(scope, r);
  });
  // Records that `part` (a VariableV2) is the slice at `offset` of the variable `full_name` of
  // `full_shape`, so that savers write it as a slice of the whole (a partitioned variable).
  m.def("register_partition", [](const Scope& scope, const OutputRef& part, const std::string& full_name,
                                 const std::vector<int64_t>& full_shape, const std::vector<int64_t>& offset) {
    Scope::Collections::PartInfo info;
    info.full_name = full_name;
    info.full_shape = ValueOrThrow(TensorShape::FromDims(full_shape));
    info.offset = offset;
    scope.collections()->partitions[part.out.node()] = std::move(info);
  });
  m.def(
      "collection_sizes",
      [](const Scope& scope) {
        Scope::Collections* c = scope.collections();
        py::dict d;
        d["initializers"] = c->initializers.size();
        d["trainable_variables"] = c->trainable_variables.size();
        d["global_variables"] = c->global_variables.size();
        d["local_variables"] = c->local_variables.size();
        d["summaries"] = c->summaries.size();
        return d;
      },
      "Sizes of the C++ client collections (for tests).");

  // Gradients and control flow.
  m.def("gradients", &AddGradientsPy, py::arg("scope"), py::arg("ys"), py::arg("xs"), py::arg("grad_ys"),
        py::arg("prefix"));
  m.def("cond", &CondPy, py::arg("scope"), py::arg("pred"), py::arg("inputs"), py::arg("then_fn"), py::arg("else_fn"));
  m.def("while_loop", &WhileLoopPy, py::arg("scope"), py::arg("loop_vars"), py::arg("cond_fn"), py::arg("body_fn"),
        py::arg("name"));

  // Optimizers.
  py::class_<train::Optimizer, std::shared_ptr<train::Optimizer>>(m, "Optimizer")
      .def("compute_gradients", &ComputeGradientsPy, py::arg("scope"), py::arg("loss"), py::arg("var_list"))
      .def("apply_gradients", &ApplyGradientsPy, py::arg("scope"), py::arg("grads_and_vars"), py::arg("global_step"))
      .def("get_slot",
           [](const train::Optimizer& o, const OutputRef& var, const std::string& slot) -> py::object {
             Output s = o.GetSlot(var.out, slot);
             if (!s.valid()) return py::none();
             return py::cast(OutputRef{var.graph, s});
           })
      .def("beta_powers", [](const train::Optimizer& o, const OutputRef& like) -> py::object {
        auto* p = dynamic_cast<const PyOptimizer*>(&o);
        if (p == nullptr || p->adam() == nullptr || p->adam()->beta1_power().node == nullptr) return py::none();
        NodeOut b1 = p->adam()->beta1_power(), b2 = p->adam()->beta2_power();
        return py::make_tuple(OutputRef{like.graph, Output(b1.node, b1.index)},
                              OutputRef{like.graph, Output(b2.node, b2.index)});
      });
  m.def("gradient_descent_optimizer", [](py::object lr, bool use_locking, const std::string& name) {
    return Wrap(std::make_shared<optimizers::GradientDescentOptimizer>(Hyper(lr, "learning_rate"), use_locking, name));
  });
  m.def("momentum_optimizer", [](py::object lr, py::object momentum, bool use_locking, const std::string& name,
                                 bool use_nesterov) {
    return Wrap(std::make_shared<optimizers::MomentumOptimizer>(Hyper(lr, "learning_rate"), Hyper(momentum, "momentum"),
                                                                use_nesterov, use_locking, name));
  });
  m.def("adagrad_optimizer",
        [](py::object lr, double initial_accumulator_value, bool use_locking, const std::string& name) {
          return Wrap(std::make_shared<optimizers::AdagradOptimizer>(Hyper(lr, "learning_rate"),
                                                                     initial_accumulator_value, use_locking, name));
        });
  m.def("adam_optimizer",
        [](py::object lr, double beta1, double beta2, py::object epsilon, bool use_locking,
           const std::string& name) -> std::shared_ptr<train::Optimizer> {
          auto adam = std::make_shared<optimizers::AdamOptimizer>(Hyper(lr, "learning_rate"), beta1, beta2,
                                                                  Hyper(epsilon, "epsilon"), use_locking, name);
          return std::make_shared<PyOptimizer>(adam, adam);
        });
  m.def("rmsprop_optimizer", [](py::object lr, py::object decay, py::object momentum, py::object epsilon,
                                bool use_locking, bool centered, const std::string& name) {
    return Wrap(std::make_shared<optimizers::RMSPropOptimizer>(Hyper(lr, "learning_rate"), Hyper(decay, "decay"),
                                                               Hyper(momentum, "momentum"), Hyper(epsilon, "epsilon"),
                                                               use_locking, centered, name));
  });
  m.def("ftrl_optimizer", [](py::object lr, py::object lr_power, double initial_accumulator_value, py::object l1,
                             py::object l2, bool use_locking, const std::string& name) {
    return Wrap(std::make_shared<optimizers::FtrlOptimizer>(
        Hyper(lr, "learning_rate"), Hyper(lr_power, "learning_rate_power"), initial_accumulator_value,
        Hyper(l1, "l1_regularization_strength"), Hyper(l2, "l2_regularization_strength"), use_locking, name));
  });
  m.def("exponential_decay", [](const Scope& scope, py::object lr, const OutputRef& step, int64_t decay_steps,
                                double decay_rate, bool staircase) {
    Input in = py::isinstance<OutputRef>(lr) ? Input(lr.cast<const OutputRef&>().out)
                                             : Input(Input::Initializer(ToTensor(lr, DT_INVALID)));
    Output r = train::ExponentialDecay(scope, in, step.out, decay_steps, decay_rate, staircase);
    ThrowIfBuildError(scope.graph());
    return Ref(scope, r);
  });
  m.def("piecewise_constant", [](const Scope& scope, const OutputRef& x, const std::vector<double>& boundaries,
                                 const std::vector<double>& values, int dtype) {
    Output r = train::PiecewiseConstant(scope, x.out, boundaries, values, static_cast<DType>(dtype));
    ThrowIfBuildError(scope.graph());
    return Ref(scope, r);
  });

  // Checkpoints.
  py::class_<SaverHandle, std::shared_ptr<SaverHandle>>(m, "Saver")
      .def(py::init([](const Scope& scope, const std::vector<std::pair<std::string, OutputRef>>& named_vars,
                       const std::vector<OutputRef>& var_list, int max_to_keep, double keep_checkpoint_every_n_hours,
                       bool sharded, const std::string& name) {
             train::SaverOptions o;
             o.write_meta_graph = false;  // the Python Saver writes the .meta (with the Python collections)
             for (const OutputRef& v : var_list) o.var_list.push_back(v.out);
             for (const auto& [n, v] : named_vars) {
               if (!o.named_vars.emplace(n, v.out).second) {
                 throw py::value_error("At least two variables have the same name: " + n);
               }
             }
             o.max_to_keep = max_to_keep;
             o.keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours;
             o.sharded = sharded;
             o.name = name;
             auto h = std::make_shared<SaverHandle>();
             h->saver = train::Saver(scope, o);
             h->graph = scope.graph_as_shared_ptr();
             ThrowIfBuildError(scope.graph());
             if (!h->saver.valid()) ThrowStatus(errors::Internal("Building the Saver failed without an error"));
             return h;
           }),
           py::arg("scope"), py::arg("named_vars"), py::arg("var_list"), py::arg("max_to_keep"),
           py::arg("keep_checkpoint_every_n_hours"), py::arg("sharded"), py::arg("name"))
      .def(
          "save",
          [](SaverHandle& h, py::handle session, const std::string& prefix, int64_t global_step, bool write_state) {
            const ClientSession& cs = ClientSessionOf(session);
            StatusOr<std::string> r;
            {
              py::gil_scoped_release nogil;
              r = h.saver.Save(cs, prefix, global_step, write_state);
            }
            return ValueOrThrow(std::move(r));
          },
          py::arg("session"), py::arg("prefix"), py::arg("global_step"), py::arg("write_state"))
      .def("restore",
           [](SaverHandle& h, py::handle session, const std::string& path) {
             const ClientSession& cs = ClientSessionOf(session);
             Status s;
             {
               py::gil_scoped_release nogil;
               s = h.saver.Restore(cs, path);
             }
             ThrowIfError(s);
           })
      .def("last_checkpoints", [](const SaverHandle& h) { return h.saver.last_checkpoints(); })
      .def("recover_last_checkpoints",
           [](SaverHandle& h, const std::string& dir) { ThrowIfError(h.saver.RecoverLastCheckpoints(dir)); })
      .def("saved_names", [](const SaverHandle& h) { return h.saver.saved_names(); })
      .def_property_readonly("filename",
                             [](const SaverHandle& h) {
                               return OutputRef{h.graph, h.saver.filename()};
                             })
      .def_property_readonly("save_path",
                             [](const SaverHandle& h) {
                               return OutputRef{h.graph, h.saver.save_path()};
                             })
      .def_property_readonly("restore_op", [](const SaverHandle& h) {
        return NodeRef{h.graph, h.saver.restore_op().node()};
      });
  m.def("latest_checkpoint", [](const std::string& dir, const std::string& latest_filename) -> py::object {
    auto r = train::LatestCheckpoint(dir, latest_filename);
    if (!r.ok()) {
      if (absl::IsNotFound(r.status())) return py::none();
      ThrowStatus(r.status());
    }
    return py::str(*r);
  });
  m.def("checkpoint_exists", [](const std::string& prefix) { return train::CheckpointExists(prefix); });
  m.def("checkpoint_state", &CheckpointStateOf, py::arg("dir"), py::arg("latest_filename") = "checkpoint");
  py::class_<CheckpointReader, std::shared_ptr<CheckpointReader>>(m, "CheckpointReader")
      .def(py::init([](const std::string& prefix) {
        auto r = std::make_shared<CheckpointReader>();
        r->reader = ValueOrThrow(BundleReader::Open(Env::Default(), prefix));
        return r;
      }))
      .def("tensor_names", [](const CheckpointReader& r) { return r.reader->TensorNames(); })
      .def("has_tensor", [](const CheckpointReader& r, const std::string& n) { return r.reader->Contains(n); })
      .def("get_tensor",
           [](const CheckpointReader& r, const std::string& n) {
             Tensor t;
             {
               py::gil_scoped_release nogil;
               t = ValueOrThrow(r.reader->Lookup(n));
             }
             return ToNumpy(std::move(t));
           })
      .def("dtype_and_shape", [](const CheckpointReader& r, const std::string& n) {
        DType dt;
        TensorShape shape;
        ThrowIfError(r.reader->GetDTypeAndShape(n, &dt, &shape));
        std::vector<int64_t> dims(shape.dim_sizes().begin(), shape.dim_sizes().end());
        return py::make_tuple(static_cast<int>(dt), dims);
      });

  // Summaries and event files.
  m.def("summary_scalar", [](const Scope& s, const std::string& name, const OutputRef& v) {
    Output r = summary::Scalar(s, name, v.out);
    ThrowIfBuildError(s.graph());
    return Ref(s, r);
  });
  m.def("summary_histogram", [](const Scope& s, const std::string& name, const OutputRef& v) {
    Output r = summary::Histogram(s, name, v.out);
    ThrowIfBuildError(s.graph());
    return Ref(s, r);
  });
  m.def("summary_merge", [](const Scope& s, const std::vector<OutputRef>& inputs) {
    std::vector<Output> in;
    for (const OutputRef& o : inputs) in.push_back(o.out);
    Output r = summary::Merge(s, in);
    ThrowIfBuildError(s.graph());
    return Ref(s, r);
  });
  py::class_<summary::FileWriter>(m, "FileWriter")
      .def(py::init([](const std::string& logdir, int max_queue, double flush_secs, const std::string& suffix) {
             summary::FileWriterOptions o;
             o.max_queue = max_queue;
             o.flush_secs = flush_secs;
             o.filename_suffix = suffix;
             py::gil_scoped_release nogil;
             return std::make_unique<summary::FileWriter>(logdir, o);
           }),
           py::arg("logdir"), py::arg("max_queue") = 10, py::arg("flush_secs") = 120.0, py::arg("filename_suffix") = "")
      .def("add_summary",
           [](summary::FileWriter& w, py::bytes s, int64_t step) {
             std::string data = s;
             Status st;
             {
               py::gil_scoped_release nogil;
               st = w.AddSummary(data, step);
             }
             ThrowIfError(st);
           })
      .def("add_scalar",
           [](summary::FileWriter& w, const std::string& tag, double v, int64_t step) {
             Status st;
             {
               py::gil_scoped_release nogil;
               st = w.AddScalar(tag, v, step);
             }
             ThrowIfError(st);
           })
      .def("add_event",
           [](summary::FileWriter& w, py::bytes data) {
             proto::Event e;
             std::string s = data;
             if (!e.ParseFromString(s))
               ThrowStatus(errors::InvalidArgument("Could not parse ", s.size(), " bytes as an Event"));
             Status st;
             {
               py::gil_scoped_release nogil;
               st = w.AddEvent(e);
             }
             ThrowIfError(st);
           })
      .def("add_graph", [](summary::FileWriter& w, const Scope& root,
                           int64_t step) { ThrowIfError(w.AddGraph(*root.graph(), step)); })
      .def("add_graph_def",
           [](summary::FileWriter& w, py::bytes data, int64_t step) {
             proto::GraphDef def;
             std::string s = data;
             if (!def.ParseFromString(s))
               ThrowStatus(errors::InvalidArgument("Could not parse ", s.size(), " bytes as a GraphDef"));
             ThrowIfError(w.AddGraphDef(def, step));
           })
      .def("add_session_log",
           [](summary::FileWriter& w, int status, const std::string& msg, int64_t step,
              const std::string& checkpoint_path) {
             ThrowIfError(w.AddSessionLog(static_cast<summary::SessionStatus>(status), msg, step, checkpoint_path));
           })
      .def("flush",
           [](summary::FileWriter& w) {
             Status st;
             {
               py::gil_scoped_release nogil;
               st = w.Flush();
             }
             ThrowIfError(st);
           })
      .def("close",
           [](summary::FileWriter& w) {
             Status st;
             {
               py::gil_scoped_release nogil;
               st = w.Close();
             }
             ThrowIfError(st);
           })
      .def_property_readonly("path", &summary::FileWriter::path)
      .def_property_readonly("logdir", &summary::FileWriter::logdir);
  // The serialized events of an event file, in order (checksums verified).
  m.def("read_events", [](const std::string& path) {
    std::vector<std::string> out;
    {
      py::gil_scoped_release nogil;
      auto r = summary::EventFileReader::Open(path);
      if (!r.ok()) {
        py::gil_scoped_acquire gil;
        ThrowStatus(r.status());
      }
      for (;;) {
        proto::Event e;
        Status s = (*r)->ReadNext(&e);
        if (absl::IsOutOfRange(s)) break;
        if (!s.ok()) {
          py::gil_scoped_acquire gil;
          ThrowStatus(s);
        }
        out.push_back(e.SerializeAsString());
      }
    }
    py::list l;
    for (const std::string& e : out) l.append(py::bytes(e));
    return l;
  });
}

}  // namespace dflow::python
