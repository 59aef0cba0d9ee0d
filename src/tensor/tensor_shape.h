// TensorShape and PartialTensorShape live in the public API: include/dflow/tensor_shape.h.
#pragma once

#include "base/status.h"
#include "dflow/tensor_shape.h"
