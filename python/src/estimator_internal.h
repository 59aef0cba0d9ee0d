// What estimator.cc and feature_columns.cc share: the calls of Python functions from C++ while it
// builds or runs (defined in estimator.cc), and the handle of a feature column that the canned
// estimators take (defined in feature_columns.cc).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "binding.h"
#include "dflow/feature_column.h"

namespace dflow::python {

// ---- Python functions called from C++ (estimator.cc) ----

// Raises the exception a Python function called from C++ raised on this thread (clearing the
// build error of `g` that it caused), if any.
void RaisePending(Graph* g = nullptr);

// A Python callable shared by C++ function objects: copies never touch Python reference counts
// (they may be made without the GIL), and the last owner drops it with the GIL taken.
using PyFn = std::shared_ptr<py::object>;
PyFn Keep(py::object fn);

// Keeps `e` as the pending exception (the first one wins) and notes the Status it stands for.
void NotePending(py::error_already_set&& e);

// Runs `call` with the GIL; an exception it raises becomes the pending one and `failed` is
// returned.
template <typename T, typename F>
T CallPython(F&& call, T failed) {
  py::gil_scoped_acquire gil;
  try {
    return call();
  } catch (py::error_already_set& e) {
    NotePending(std::move(e));
  } catch (py::cast_error& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
    NotePending(py::error_already_set());
  } catch (py::builtin_exception& e) {
    e.set_error();
    NotePending(py::error_already_set());
  }
  return failed;
}

// The Status of the C++ call when the Python `what` raised the pending exception.
Status PythonRaised(const char* what);

// A function Output -> Output built in a scope (normalizer_fn, activation_fn): fn(scope, x) -> x.
// Null when `fn` is None.
std::function<Output(const Scope&, const Output&)> UnaryBuilder(py::object fn, const char* what);

// ---- feature columns (feature_columns.cc) ----

// A feature column as Python holds it (_dflow.FeatureColumn).
struct ColumnRef {
  feature_column::Column column;
};

std::vector<feature_column::Column> ColumnsOf(const std::vector<ColumnRef>& cols);
// {name: Output} from Python.
feature_column::Features FeaturesOf(const py::dict& d);

}  // namespace dflow::python
