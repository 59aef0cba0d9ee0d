#include "binding.h"

namespace dflow::python {

void BindCluster(py::module_& m) {}

}  // namespace dflow::python
