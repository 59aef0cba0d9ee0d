// The arguments of one step given from Python (feeds, fetches, targets as handles), shared by
// every session the extension runs: tf.Session (session.cc), the sessions training loops lend
// hooks and MonitoredSession.run (cluster.cc), and the estimator's (estimator.cc). session.cc.
#pragma once

#include <optional>
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

}  // namespace dflow::python
