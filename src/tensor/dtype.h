// DType lives in the public API: include/dflow/dtype.h.
#pragma once

#include "dflow/dtype.h"
