// Sessions for the Python package: a ClientSession over the Python graph's Scope, with feeds
// converted to the fed tensor's dtype, fetches returned as numpy, the GIL released while a step
// runs, and Ctrl-C cancelling the step.
#include <semaphore.h>
#include <signal.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "binding.h"
#include "run_args.h"
#include "dflow/session.h"
#include "framework/cancellation.h"
#include "framework/credentials.h"
#include "runtime/local_device.h"

namespace dflow::python {
namespace {

// Ctrl-C while a step runs on the main thread: a C signal handler posts a semaphore; a watcher
// thread cancels every step in flight; the run returns Cancelled and Python's own SIGINT handler
// runs (KeyboardInterrupt by default).
struct Interrupts {
  std::mutex mu;
  std::set<CancellationManager*> in_flight;
  sem_t sem;
  std::atomic<bool> fired{false};
  std::thread::id main_thread;
  std::once_flag watcher_started;
};
Interrupts& Ints() {
  static auto* i = [] {
    auto* x = new Interrupts();
    sem_init(&x->sem, 0, 0);
    return x;
  }();
  return *i;
}

void OnSigint(int) {
  Interrupts& i = Ints();
  i.fired.store(true);
  sem_post(&i.sem);  // async-signal-safe
}

void StartWatcher() {
  std::call_once(Ints().watcher_started, [] {
    std::thread([] {
      Interrupts& i = Ints();
      for (;;) {
        if (sem_wait(&i.sem) != 0) continue;
        std::lock_guard<std::mutex> l(i.mu);
        for (CancellationManager* c : i.in_flight) c->StartCancel();
      }
    }).detach();
  });
}

// Installs the handler for the duration of a run on the main thread.
class SigintScope {
 public:
  explicit SigintScope(CancellationManager* cm) : cm_(cm) {
    Interrupts& i = Ints();
    active_ = std::this_thread::get_id() == i.main_thread;
    if (!active_) return;
    StartWatcher();
    {
      std::lock_guard<std::mutex> l(i.mu);
      i.in_flight.insert(cm_);
    }
    struct sigaction sa = {};
    sa.sa_handler = OnSigint;
    sigemptyset(&sa.sa_mask);
    i.fired.store(false);
    installed_ = sigaction(SIGINT, &sa, &old_) == 0;
  }
  ~SigintScope() {
    if (!active_) return;
    Interrupts& i = Ints();
    if (installed_) sigaction(SIGINT, &old_, nullptr);
    std::lock_guard<std::mutex> l(i.mu);
    i.in_flight.erase(cm_);
  }
  bool fired() const { return active_ && Ints().fired.load(); }

 private:
  CancellationManager* cm_;
  bool active_ = false;
  bool installed_ = false;
  struct sigaction old_ = {};
};

struct SessionHandle {
  std::unique_ptr<ClientSession> session;
  std::shared_ptr<Graph> graph;
  std::string container;  // a local session's own variables; cleared when it closes
  bool closed = false;
  std::mutex mu;
  int running = 0;

  void Close() {
    if (closed) return;
    closed = true;
    if (session) session->session()->Close().IgnoreError();
    if (!container.empty()) LocalCpuDevice()->resource_manager()->Cleanup(container);
  }
};

std::atomic<uint64_t> next_session{0};

// A fed value as a tensor of `dtype`. A value dflow's conversion refuses is converted as
// TensorFlow converts feeds, numpy.asarray(value, dtype): the values TensorFlow accepts are
// accepted (["1.5"] for a float, Python ints beyond int64 for a float), and numpy's exception
// is raised for the rest.
Tensor FeedTensor(py::handle value, DType dtype) {
  try {
    return ToTensor(value, dtype);
  } catch (py::builtin_exception&) {
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_ValueError) && !e.matches(PyExc_TypeError)) throw;
  }
  py::object arr = py::module_::import("numpy").attr("asarray")(value, NumpyDType(dtype));
  return ToTensor(arr, dtype);
}

}  // namespace

RunArgs ToRunArgs(py::list feeds, py::list fetches, py::list targets, std::optional<const Graph*> graph) {
  RunArgs args;
  for (py::handle f : feeds) {
    py::tuple pair = py::reinterpret_borrow<py::tuple>(f);
    const OutputRef& o = pair[0].cast<const OutputRef&>();
    if (graph && o.graph.get() != *graph) {
      throw py::value_error("Cannot feed " + o.out.name() + ": it is not an element of this session's graph.");
    }
    Tensor t;
    try {
      t = FeedTensor(pair[1], o.out.dtype());
    } catch (py::error_already_set& e) {
      if (e.matches(PyExc_ValueError) || e.matches(PyExc_TypeError)) {
        std::string msg = std::string("Cannot feed value for tensor '") + o.out.name() + "': " + e.what();
        if (e.matches(PyExc_ValueError)) throw py::value_error(msg);
        throw py::type_error(msg);
      }
      throw;
    }
    args.feeds.emplace(o.out, Input::Initializer(std::move(t)));
  }
  args.fetches.reserve(fetches.size());
  for (py::handle f : fetches) {
    const OutputRef& o = f.cast<const OutputRef&>();
    if (graph && o.graph.get() != *graph) {
      throw py::value_error("Fetch " + o.out.name() + " is not an element of this session's graph.");
    }
    args.fetches.push_back(o.out);
  }
  for (py::handle t : targets) {
    const NodeRef& n = t.cast<const NodeRef&>();
    if (graph && n.graph.get() != *graph) {
      throw py::value_error("Operation " + n.node->name() + " is not an element of this session's graph.");
    }
    args.targets.push_back(n.op());
  }
  return args;
}

py::list ToNumpyList(std::vector<Tensor> values) {
  py::list out(values.size());
  for (size_t i = 0; i < values.size(); ++i) out[i] = ToNumpy(std::move(values[i]));
  return out;
}

const ClientSession& ClientSessionOf(py::handle session) {
  // A training loop's session lent to Python (a hook's session; cluster.cc).
  if (const ClientSession* lent = BorrowedClientSession(session)) return *lent;
  if (!py::isinstance<SessionHandle>(session)) {
    throw py::type_error("Expected a session handle, got " +
                         std::string(py::str(py::type::of(session).attr("__name__"))));
  }
  SessionHandle& h = session.cast<SessionHandle&>();
  if (h.closed) {
    PyErr_SetString(PyExc_RuntimeError, "Attempted to use a closed Session.");
    throw py::error_already_set();
  }
  return *h.session;
}

void BindSession(py::module_& m) {
  Ints().main_thread = std::this_thread::get_id();

  py::class_<SessionHandle, std::shared_ptr<SessionHandle>>(m, "Session")
      .def(py::init([](const Scope& scope, const std::string& target, int inter_op_threads, bool allow_soft_placement,
                       bool log_device_placement, int64_t operation_timeout_ms, std::vector<std::string> device_filters,
                       const std::string& credentials, bool fuse_ops) {
             auto h = std::make_shared<SessionHandle>();
             SessionOptions o;
             if (!credentials.empty()) o.credentials = ValueOrThrow(LoadCredentials(credentials));
             o.target = target;
             o.inter_op_threads = inter_op_threads;
             o.allow_soft_placement = allow_soft_placement;
             o.log_device_placement = log_device_placement;
             o.operation_timeout_ms = operation_timeout_ms;
             o.device_filters = std::move(device_filters);
             o.fuse_ops = fuse_ops;
             if (target.empty() || target == "local") {
               // TensorFlow: each local session has its own variables.
               h->container = absl::StrCat("__pysession_", next_session.fetch_add(1));
               o.default_container = h->container;
             }
             h->graph = scope.graph_as_shared_ptr();
             {
               py::gil_scoped_release nogil;
               h->session = std::make_unique<ClientSession>(scope, o);
             }
             if (h->session->session() == nullptr) {
               // Creation failed: the first run reports why; report it now instead.
               auto s = h->session->Run(std::vector<Output>{});
               ThrowIfError(s.status());
             }
             return h;
           }),
           py::arg("scope"), py::arg("target") = "", py::arg("inter_op_threads") = 0,
           py::arg("allow_soft_placement") = false, py::arg("log_device_placement") = false,
           py::arg("operation_timeout_ms") = 0, py::arg("device_filters") = std::vector<std::string>{},
           py::arg("credentials") = "", py::arg("fuse_ops") = true)
      // feeds: list of (Output, value); fetches: list of Output; targets: list of Node.
      // stats: None, or a list that gets (node, op, device, start_micros, end_micros) of every
      // node the step ran (RunOptions.trace_level with a RunMetadata).
      .def(
          "run",
          [](SessionHandle& h, py::list feeds, py::list fetches, py::list targets, int64_t timeout_ms,
             py::object stats) {
            if (h.closed)
              throw py::reinterpret_borrow<py::object>(PyExc_RuntimeError)("Attempted to use a closed Session.");
            RunArgs args = ToRunArgs(feeds, fetches, targets, h.graph.get());
            CancellationManager cm;
            RunOptions ro;
            ro.timeout_in_ms = timeout_ms;
            ro.cancellation = &cm;
            StatusOr<std::vector<Tensor>> result;
            RunMetadata metadata;
            ro.trace = !stats.is_none();
            const bool on_main = std::this_thread::get_id() == Ints().main_thread;
            {
              // Installed with the GIL held, then a Ctrl-C that Python received before it is
              // raised now: none is lost between Python's last check and a step that blocks.
              SigintScope sig(&cm);
              if (on_main && PyErr_CheckSignals() != 0) throw py::error_already_set();
              py::gil_scoped_release nogil;
              result = h.session->Run(args.feeds, args.fetches, args.targets, stats.is_none() ? nullptr : &metadata,
                                      ro);
            }
            // Read after the handler is restored, so that a Ctrl-C at the very end is not lost.
            const bool interrupted = on_main && Ints().fired.load();
            args.feeds.clear();  // fed tensors fetched back become numpy's alone
            if (interrupted) {
              PyErr_SetInterrupt();
              if (PyErr_CheckSignals() != 0) throw py::error_already_set();
            }
            if (!stats.is_none()) {
              py::list l = stats.cast<py::list>();
              for (const NodeExecStats& n : metadata.step_stats) {
                l.append(py::make_tuple(n.node_name, n.op, n.device, n.start_micros, n.end_micros));
              }
            }
            if (!result.ok()) ThrowStatus(result.status());
            return ToNumpyList(*std::move(result));
          },
          py::arg("feeds"), py::arg("fetches"), py::arg("targets"), py::arg("timeout_ms") = 0,
          py::arg("stats") = py::none())
      .def("list_devices",
           [](SessionHandle& h) {
             if (h.closed || !h.session->session()) return std::vector<std::string>{};
             return h.session->session()->ListDevices();
           })
      .def("close",
           [](SessionHandle& h) {
             py::gil_scoped_release nogil;
             h.Close();
           })
      .def_property_readonly("closed", [](const SessionHandle& h) { return h.closed; });
}

}  // namespace dflow::python
