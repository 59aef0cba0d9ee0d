// Holding Python objects from C++ code that may run with or without the GIL (training loops,
// servers, callbacks): shared by the parts of the extension that keep Python callables.
#pragma once

#include "binding.h"

namespace dflow::python {

inline bool Finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

// Drops a Python reference from C++ code that may or may not hold the GIL (destructors run
// wherever the last owner lets go). At interpreter exit the reference is left alone.
inline void DropPython(py::object& o) {
  if (!o) return;
  if (PyGILState_Check()) {
    o = py::object();
  } else if (Py_IsInitialized() && !Finalizing()) {
    py::gil_scoped_acquire gil;
    o = py::object();
  } else {
    o.release();
  }
}

// A Python object kept by C++ code (a callback), released safely wherever the C++ side lets go.
struct PyRef {
  explicit PyRef(py::object x) : o(std::move(x)) {}
  ~PyRef() { DropPython(o); }
  PyRef(const PyRef&) = delete;
  PyRef& operator=(const PyRef&) = delete;
  py::object o;
};

// Runs `fn` without the GIL when this thread holds it (and Python is not exiting: then the GIL
// stays where it is).
template <typename Fn>
void WithoutGil(Fn&& fn) {
  if (PyGILState_Check() && !Finalizing()) {
    py::gil_scoped_release nogil;
    fn();
  } else {
    fn();
  }
}

}  // namespace dflow::python
