// What every session the extension runs shares: the arguments of one step given from Python
// (feeds, fetches, targets as handles; tf.Session in session.cc, the sessions training loops lend
// hooks and MonitoredSession.run in cluster.cc, the estimator's in estimator.cc), defined in
// session.cc, and the binding of a session a training loop lends Python.
#pragma once

#include <optional>
#include <shared_mutex>
#include <vector>

#include "binding.h"
#include "dflow/session.h"

namespace dflow::python {

struct RunArgs {
  ClientSession::FeedDict feeds;
  std::vector<Output> fetches;
  std::vector<Operation> targets;
};

// `feeds`: list of (OutputRef, value); `fetches`: list of OutputRef; `targets`: list of NodeRef.
// Each must be of `graph` (ValueError, as TensorFlow's) unless `graph` is nullopt. A fed value is
// converted as TensorFlow converts feeds (numpy.asarray(value, dtype) where dflow's conversion
// refuses it); a value that cannot be fed raises ValueError/TypeError naming the tensor.
RunArgs ToRunArgs(py::list feeds, py::list fetches, py::list targets, std::optional<const Graph*> graph);

// The fetched values of a step, as numpy.
py::list ToNumpyList(std::vector<Tensor> values);

// One step on a session a training loop lends Python (`session`, guarded by `mu`; null once the
// loop dropped it: then Cancelled), without the GIL. `cancel` (may be null) cancels it.
template <typename Session>
StatusOr<std::vector<Tensor>> RunLentStep(std::shared_mutex& mu, Session* const& session, const RunArgs& args,
                                          int64_t timeout_ms, CancellationManager* cancel) {
  py::gil_scoped_release nogil;
  std::shared_lock<std::shared_mutex> l(mu);
  if (session == nullptr) return errors::Cancelled("closed");
  RunOptions ro;
  ro.timeout_in_ms = timeout_ms;
  ro.cancellation = cancel;
  return session->Run(args.feeds, args.fetches, args.targets, nullptr, ro);
}

// Binds as `name` the handle of a session a C++ training loop lends Python (a hook's session):
// `Lent` holds `std::shared_ptr<State> state`, whose `session` is null once the loop dropped it;
// `run(State&, feeds, fetches, targets, timeout_ms)` runs one step; `throw_closed` raises the
// RuntimeError of a session the loop dropped. cluster.cc (MonitoredSession), estimator.cc.
template <typename Lent, typename RunFn>
void BindLentSession(py::module_& m, const char* name, const char* close_doc, RunFn run, void (*throw_closed)()) {
  py::class_<Lent>(m, name)
      .def(
          "run",
          [run, throw_closed](Lent& l, py::list feeds, py::list fetches, py::list targets, int64_t timeout_ms) {
            if (l.state == nullptr || l.state->session == nullptr) throw_closed();
            return run(*l.state, feeds, fetches, targets, timeout_ms);
          },
          py::arg("feeds"), py::arg("fetches"), py::arg("targets"), py::arg("timeout_ms") = 0)
      .def("list_devices",
           [throw_closed](Lent& l) {
             if (l.state == nullptr || l.state->session == nullptr) throw_closed();
             return l.state->session->session()->ListDevices();
           })
      .def(
          "close", [](Lent&) {}, close_doc)
      .def_property_readonly("closed", [](const Lent& l) { return l.state == nullptr || l.state->session == nullptr; })
      .def("same_as", [](const Lent& a, const Lent& b) { return a.state == b.state; });
}

}  // namespace dflow::python
