// NodeProperties: what a kernel and a shape function may know about the node they serve.
#pragma once

#include <string>
#include <vector>

#include "framework/attr_value.h"
#include "framework/op_def.h"

namespace dflow {

struct NodeProperties {
  std::string name;
  std::string op;
  const OpDef* op_def = nullptr;
  AttrMap attrs;                   // complete: defaults filled in
  std::vector<DType> input_types;  // one per input tensor (lists expanded)
  std::vector<DType> output_types;
  std::string requested_device;  // as the user wrote it
  std::string assigned_device;   // full name after placement ("" before)
};

}  // namespace dflow
