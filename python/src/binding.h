// Shared helpers of the Python extension `dflow._dflow`: Status → TensorFlow's exception classes,
// numpy ↔ Tensor, and the handles the Python layer wraps (graph, scope, node, output).
// Only python/src includes pybind11; the Python package (python/dflow) builds TensorFlow's API
// on these handles.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "dflow/core.h"
#include "dflow/scope.h"
#include "graph/graph.h"

namespace dflow {
class ClientSession;
}  // namespace dflow

namespace dflow::python {

namespace py = pybind11;

// Raises the exception class registered for `s.code()` (tf.errors.*) with `s.message()`.
[[noreturn]] void ThrowStatus(const Status& s);
inline void ThrowIfError(const Status& s) {
  if (!s.ok()) ThrowStatus(s);
}
template <typename T>
T ValueOrThrow(StatusOr<T> v) {
  if (!v.ok()) ThrowStatus(v.status());
  return std::move(v).value();
}
// Raises the error recorded in the graph while building (and clears it, so that building goes
// on after the exception is caught).
void ThrowIfBuildError(Graph* g);

// numpy ↔ Tensor. `want` DT_INVALID infers the dtype from the value (Python ints → int32, or
// int64 when out of range; floats → float32; str/bytes → string), else converts to `want` as
// numpy.asarray(value, dtype) does. Ragged lists raise ValueError; a value that cannot take the
// dtype raises TypeError.
Tensor ToTensor(py::handle value, DType want);
// Numbers: a numpy array (zero-copy when nothing else holds the buffer) or a numpy scalar for
// 0-d; strings: bytes or an object array of bytes.
py::object ToNumpy(Tensor t);
py::object NumpyDType(DType t);          // numpy.dtype for a dflow dtype
DType FromNumpyDType(py::handle dtype);  // DT_INVALID when dflow has no such dtype

// A node of a graph, kept alive by holding the graph.
struct NodeRef {
  std::shared_ptr<Graph> graph;
  Node* node = nullptr;
  Operation op() const { return Operation(node); }
};
struct OutputRef {
  std::shared_ptr<Graph> graph;
  Output out;
};

PartialTensorShape ToShape(py::handle shape);       // None / list of ints and None
py::object FromShape(const PartialTensorShape& s);  // None for unknown rank, else a tuple
AttrValue ToAttrValue(const std::string& attr_type, py::handle value);
py::object FromAttrValue(const AttrValue& v);

// The ClientSession of a Python session's handle (`tf.Session()._h`, a `_dflow.Session`), for
// C++ APIs that run steps themselves (Saver::Save). RuntimeError when it is closed; TypeError
// when `session` is not a session handle. session.cc.
const ClientSession& ClientSessionOf(py::handle session);
// The ClientSession of a session a training loop lends Python (a MonitoredSession hook's
// session, cluster.cc); null when `session` is not one. RuntimeError when the loop dropped it.
const ClientSession* BorrowedClientSession(py::handle session);

// Parts of the module, one per file.
void BindCore(py::module_& m);            // core.cc: graphs, scopes, nodes, op building, registry
void BindSession(py::module_& m);         // session.cc: Session, run, Ctrl-C
void BindTrain(py::module_& m);           // train.cc: gradients, control flow, variables, optimizers, savers
void BindData(py::module_& m);            // data.cc: datasets, functions traced from Python
void BindEstimator(py::module_& m);       // estimator.cc: feature columns (BindFeatureColumns), estimators
void BindFeatureColumns(py::module_& m);  // feature_columns.cc: feature columns, input_layer, linear_model
void BindServer(py::module_& m);          // server.cc: Server, cluster specs, device setter, coordinators
void BindCluster(py::module_& m);         // cluster.cc: monitored sessions, hooks, SyncReplicasOptimizer

}  // namespace dflow::python
