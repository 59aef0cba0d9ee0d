#include "binding.h"

namespace dflow::python {

void BindTrain(py::module_& m) {}

}  // namespace dflow::python
