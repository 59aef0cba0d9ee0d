// summary::FileWriter lives in the public API: include/dflow/event_file.h.
#pragma once

#include "base/env.h"
#include "base/status.h"
#include "dflow/event_file.h"
#include "tensor/tensor.h"
