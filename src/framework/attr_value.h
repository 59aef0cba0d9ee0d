// AttrValue and AttrMap live in the public API: include/dflow/attr_value.h.
#pragma once

#include "base/status.h"
#include "dflow/attr_value.h"
#include "tensor/tensor.h"
