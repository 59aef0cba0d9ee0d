#include "binding.h"

namespace dflow::python {

void BindEstimator(py::module_& m) {}

}  // namespace dflow::python
