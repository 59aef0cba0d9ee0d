#include "binding.h"

namespace dflow::python {

void BindData(py::module_& m) {}

}  // namespace dflow::python
