// Servers and clusters for the Python package: Server (with a join that Ctrl-C and SIGTERM
// end), NotifyJobComplete, TF_CONFIG and the cluster flags, replica_device_setter's device
// function, Coordinator and QueueRunner. The training loops that run on them are in cluster.cc.
#include <semaphore.h>
#include <signal.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "binding.h"
#include "py_ref.h"
#include "dflow/coordinator.h"
#include "dflow/queue_runner.h"
#include "dflow/replica_device_setter.h"
#include "dflow/server.h"
#include "framework/credentials.h"
#include "base/net.h"
#include "distributed/cluster_spec.h"

namespace dflow::python {
namespace {

std::thread::id g_main_thread;

// ---- servers ----

struct ServerHandle {
  std::unique_ptr<Server> server;
  // Stopping waits for the steps in progress, which may call Python (a dataset's map function):
  // without the GIL.
  ~ServerHandle() {
    WithoutGil([&] { server.reset(); });
  }
};

// SIGINT/SIGTERM while the main thread is in Server.join: a watcher thread stops the server.
sem_t g_join_sem;
std::atomic<int> g_join_signal{0};
void OnJoinSignal(int sig) {
  g_join_signal.store(sig);
  sem_post(&g_join_sem);
}

void JoinServer(ServerHandle& h) {
  if (h.server == nullptr) throw py::value_error("The server has not started");
  Server* server = h.server.get();
  if (std::this_thread::get_id() != g_main_thread) {
    py::gil_scoped_release nogil;
    server->Join();
    return;
  }
  static std::once_flag once;
  std::call_once(once, [] { sem_init(&g_join_sem, 0, 0); });
  while (sem_trywait(&g_join_sem) == 0) {
  }
  g_join_signal.store(0);
  struct sigaction sa = {}, old_int = {}, old_term = {};
  sa.sa_handler = OnJoinSignal;
  sigemptyset(&sa.sa_mask);
  bool int_installed = false, term_installed = false;
  struct sigaction cur;
  if (sigaction(SIGINT, nullptr, &cur) == 0 && cur.sa_handler != SIG_IGN)
    int_installed = sigaction(SIGINT, &sa, &old_int) == 0;
  if (sigaction(SIGTERM, nullptr, &cur) == 0 && cur.sa_handler != SIG_IGN)
    term_installed = sigaction(SIGTERM, &sa, &old_term) == 0;
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (true) {
      if (sem_wait(&g_join_sem) != 0) continue;
      if (done.load()) return;
      if (g_join_signal.load() != 0) {
        server->Stop();
        return;
      }
    }
  });
  {
    py::gil_scoped_release nogil;
    server->Join();
  }
  done.store(true);
  sem_post(&g_join_sem);
  watcher.join();
  if (int_installed) sigaction(SIGINT, &old_int, nullptr);
  if (term_installed) sigaction(SIGTERM, &old_term, nullptr);
  int sig = g_join_signal.exchange(0);
  if (sig != 0) {
    // The signal goes to whoever handled it before: Python's handler (KeyboardInterrupt), or
    // the default action (SIGTERM ends the process).
    raise(sig);
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
}

py::dict TaskConfigToDict(const TaskConfig& t) {
  py::dict cluster;
  for (const auto& [job, tasks] : t.cluster.jobs()) {
    py::dict d;
    for (const auto& [i, addr] : tasks) d[py::int_(i)] = addr;
    cluster[py::str(job)] = d;
  }
  py::dict out;
  out["cluster"] = cluster;
  out["job_name"] = t.job_name;
  out["task_index"] = t.task_index;
  out["is_chief"] = t.is_chief;
  return out;
}

ClusterSpec ClusterFrom(const std::map<std::string, std::map<int, std::string>>& jobs) {
  return ValueOrThrow(ClusterSpec::FromSparseJobs(jobs));
}

// ---- device functions ----

struct DeviceFunctionHandle {
  DeviceFunction fn;
};

// Server.notify_job_complete and the module's: `notify(options, &result)` runs without the GIL;
// (notified_tasks, unreachable_tasks).
template <typename Notify>
py::tuple NotifyJobCompleteWith(int64_t drain_ms, int64_t timeout_ms, int64_t retry_ms, Notify notify) {
  JobCompleteOptions o;
  o.drain_ms = drain_ms;
  o.timeout_ms = timeout_ms;
  o.retry_ms = retry_ms;
  JobCompleteResult r;
  Status s;
  {
    py::gil_scoped_release nogil;
    s = notify(o, &r);
  }
  ThrowIfError(s);
  return py::make_tuple(r.notified_tasks, r.unreachable_tasks);
}

}  // namespace

void BindServer(py::module_& m) {
  g_main_thread = std::this_thread::get_id();

  m.def(
      "pick_free_ports", [](int n) { return ValueOrThrow(PickFreePorts(n)); },
      "n distinct free TCP ports on 127.0.0.1 (for tests and local clusters).");

  // ---- servers and the cluster of a task ----
  py::class_<ServerHandle, std::shared_ptr<ServerHandle>>(m, "Server")
      .def_static(
          "create",
          [](const std::map<std::string, std::map<int, std::string>>& jobs, const std::string& job_name, int task_index,
             int64_t startup_wait_ms, const std::string& credentials, bool insecure,
             const std::vector<std::string>& allowed_dirs, const py::dict& limits) {
            ServerOptions o;
            o.cluster = ClusterFrom(jobs);
            o.job_name = job_name;
            o.task_index = task_index;
            if (startup_wait_ms > 0) o.startup_wait_ms = startup_wait_ms;
            if (insecure && !credentials.empty()) {
              ThrowIfError(errors::InvalidArgument("credentials and insecure=True exclude each other"));
            }
            if (!credentials.empty()) o.credentials = ValueOrThrow(LoadCredentials(credentials));
            o.credentials.insecure = insecure;
            o.allowed_dirs = allowed_dirs;
            for (auto [key, value] : limits) {
              const std::string k = py::cast<std::string>(key);
              const int64_t v = py::cast<int64_t>(value);
              if (k == "step_memory_limit_bytes") o.step_memory_limit_bytes = v;
              else if (k == "max_graph_bytes") o.max_graph_bytes = v;
              else if (k == "max_graph_nodes") o.max_graph_nodes = v;
              else if (k == "max_sessions_per_client") o.max_sessions_per_client = static_cast<int>(v);
              else if (k == "session_idle_timeout_ms") o.session_idle_timeout_ms = v;
              else if (k == "max_message_bytes") o.max_message_bytes = v;
              else ThrowIfError(errors::InvalidArgument("Unknown server limit '", k, "'"));
            }
            StatusOr<std::unique_ptr<Server>> s;
            {
              py::gil_scoped_release nogil;
              s = Server::Create(o);
            }
            auto h = std::make_shared<ServerHandle>();
            h->server = ValueOrThrow(std::move(s));
            return h;
          },
          py::arg("jobs"), py::arg("job_name"), py::arg("task_index"), py::arg("startup_wait_ms") = 0,
          py::arg("credentials") = "", py::arg("insecure") = false,
          py::arg("allowed_dirs") = std::vector<std::string>{}, py::arg("limits") = py::dict())
      .def_property_readonly("target", [](const ServerHandle& h) { return h.server->target(); })
      .def_property_readonly("port", [](const ServerHandle& h) { return h.server->port(); })
      .def_property_readonly("job_complete", [](const ServerHandle& h) { return h.server->job_complete(); })
      .def("join", &JoinServer)
      .def("stop",
           [](ServerHandle& h) {
             py::gil_scoped_release nogil;
             h.server->Stop();
           })
      .def(
          "notify_job_complete",
          [](ServerHandle& h, int64_t drain_ms, int64_t timeout_ms, int64_t retry_ms) {
            return NotifyJobCompleteWith(drain_ms, timeout_ms, retry_ms,
                                         [&](const JobCompleteOptions& o, JobCompleteResult* r) {
                                           return h.server->NotifyJobComplete(o, r);
                                         });
          },
          py::arg("drain_ms") = 5000, py::arg("timeout_ms") = 10000, py::arg("retry_ms") = 60000);
  m.def(
      "notify_job_complete",
      [](const std::string& target, int64_t drain_ms, int64_t timeout_ms, int64_t retry_ms) {
        return NotifyJobCompleteWith(drain_ms, timeout_ms, retry_ms,
                                     [&](const JobCompleteOptions& o, JobCompleteResult* r) {
                                       return NotifyJobComplete(target, o, r);
                                     });
      },
      py::arg("target"), py::arg("drain_ms") = 5000, py::arg("timeout_ms") = 10000, py::arg("retry_ms") = 60000);
  m.def("check_cluster",
        [](const std::map<std::string, std::map<int, std::string>>& jobs) { return ClusterFrom(jobs).DebugString(); });
  m.def("parse_tf_config", [](const std::string& json) { return TaskConfigToDict(ValueOrThrow(ParseTfConfig(json))); });
  m.def("task_config_from_args", [](const std::vector<std::string>& args, const std::string& tf_config) {
    std::vector<std::string> rest;
    TaskConfig t = ValueOrThrow(TaskConfigFromArgs(args, tf_config, &rest));
    py::dict d = TaskConfigToDict(t);
    d["rest"] = rest;
    return d;
  });

  // ---- replica_device_setter ----
  py::class_<DeviceFunctionHandle, std::shared_ptr<DeviceFunctionHandle>>(m, "DeviceFunction")
      .def(
          "device_for",
          [](const DeviceFunctionHandle& h, const NodeRef& n) {
            DeviceRequest r{n.node->op(), n.node->name(), n.node->requested_device(), n.node->attrs()};
            return ValueOrThrow(h.fn(r));
          },
          "The device the function gives an existing node (TensorFlow calls a device function with an op).")
      .def(
          "apply", [](const DeviceFunctionHandle& h, const Scope& s) { return s.WithDeviceFunction(h.fn); },
          "The scope whose ops get their devices from this function.");
  m.def("replica_device_setter", [](int ps_tasks, const std::string& ps_device, const std::string& worker_device,
                                    bool merge_devices, py::object ps_ops, py::object ps_strategy) {
    train::ReplicaDeviceSetterOptions o;
    o.ps_tasks = ps_tasks;
    o.ps_device = ps_device;
    o.worker_device = worker_device;
    o.merge_devices = merge_devices;
    if (!ps_ops.is_none()) o.ps_ops = ps_ops.cast<std::vector<std::string>>();
    if (!ps_strategy.is_none()) {
      auto keep = std::make_shared<PyRef>(std::move(ps_strategy));
      // Called while an op is built from Python (the GIL is held); the Python function gets a
      // view of the op and returns the task.
      o.ps_strategy = [keep](const DeviceRequest& r) -> StatusOr<int> {
        py::gil_scoped_acquire gil;
        try {
          py::dict attrs;
          for (const auto& [k, v] : r.attrs) attrs[py::str(k)] = FromAttrValue(v);
          return keep->o(std::string(r.op), std::string(r.name), std::string(r.device), attrs).cast<int>();
        } catch (py::error_already_set& e) {
          return errors::InvalidArgument("The ps_strategy raised ", e.what());
        } catch (py::cast_error& e) {
          return errors::InvalidArgument("The ps_strategy must return a task index (an int): ", e.what());
        }
      };
    }
    auto h = std::make_shared<DeviceFunctionHandle>();
    h->fn = train::ReplicaDeviceSetter(o);
    return h;
  });
  m.def("standard_ps_ops", [] { return train::StandardPsOps(); });

  // ---- coordinators and queue runners ----
  py::class_<train::Coordinator, std::shared_ptr<train::Coordinator>>(m, "Coordinator")
      .def(py::init<>())
      .def("request_stop",
           [](train::Coordinator& c) {
             py::gil_scoped_release nogil;
             c.RequestStop();
           })
      .def("should_stop", &train::Coordinator::ShouldStop)
      .def("wait_for_stop",
           [](const train::Coordinator& c, int64_t timeout_ms) {
             py::gil_scoped_release nogil;
             return c.WaitForStop(timeout_ms);
           })
      .def("report_error",
           [](train::Coordinator& c, int code, const std::string& message) {
             c.ReportStatus(Status(static_cast<absl::StatusCode>(code), message));
           })
      .def("status",
           [](const train::Coordinator& c) -> py::object {
             Status s = c.GetStatus();
             if (s.ok()) return py::none();
             return py::make_tuple(static_cast<int>(s.code()), std::string(s.message()));
           })
      .def("join",
           [](train::Coordinator& c) {
             Status s;
             {
               py::gil_scoped_release nogil;
               s = c.Join();
             }
             ThrowIfError(s);
           })
      .def("all_runners_stopped", &train::Coordinator::AllRunnersStopped);
  py::class_<train::QueueRunner, std::shared_ptr<train::QueueRunner>>(m, "QueueRunner")
      .def(py::init([](const std::vector<NodeRef>& enqueue_ops, py::object close_op, py::object cancel_op,
                       std::vector<int> closed_codes) {
             std::vector<Operation> ops;
             for (const NodeRef& n : enqueue_ops) ops.push_back(n.op());
             Operation close = close_op.is_none() ? Operation() : close_op.cast<const NodeRef&>().op();
             Operation cancel = cancel_op.is_none() ? Operation() : cancel_op.cast<const NodeRef&>().op();
             std::vector<absl::StatusCode> codes;
             for (int c : closed_codes) codes.push_back(static_cast<absl::StatusCode>(c));
             return std::make_shared<train::QueueRunner>(ops, close, cancel, codes);
           }),
           py::arg("enqueue_ops"), py::arg("close_op"), py::arg("cancel_op"), py::arg("queue_closed_codes"))
      .def("start",
           [](train::QueueRunner& r, py::handle session, py::object coord) {
             const ClientSession& cs = ClientSessionOf(session);
             train::Coordinator* c = coord.is_none() ? nullptr : coord.cast<train::Coordinator*>();
             ThrowIfError(r.Start(const_cast<ClientSession*>(&cs), c));
           })
      .def("request_stop",
           [](train::QueueRunner& r) {
             py::gil_scoped_release nogil;
             r.RequestStop();
           })
      .def("join",
           [](train::QueueRunner& r) {
             Status s;
             {
               py::gil_scoped_release nogil;
               s = r.Join();
             }
             ThrowIfError(s);
           })
      .def("is_running", &train::QueueRunner::IsRunning)
      .def("status",
           [](const train::QueueRunner& r) -> py::object {
             Status s = r.GetStatus();
             if (s.ok()) return py::none();
             return py::make_tuple(static_cast<int>(s.code()), std::string(s.message()));
           })
      .def_property_readonly("runs", &train::QueueRunner::runs);
}

}  // namespace dflow::python
