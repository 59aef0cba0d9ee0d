// The extension module dflow._dflow. Each part binds one area of the C++ API.
#include "binding.h"

PYBIND11_MODULE(_dflow, m) {
  m.doc() = "dflow's C++ engine, bound for the dflow Python package.";
  dflow::python::BindCore(m);
  dflow::python::BindSession(m);
  dflow::python::BindTrain(m);
  dflow::python::BindData(m);
  dflow::python::BindEstimator(m);
  dflow::python::BindServer(m);
  dflow::python::BindCluster(m);
}
