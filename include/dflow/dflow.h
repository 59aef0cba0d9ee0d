// Everything of the public C++ API.
#pragma once

#include "dflow/array_ops.h"
#include "dflow/control_flow.h"
#include "dflow/core.h"
#include "dflow/dataset.h"
#include "dflow/gradients.h"
#include "dflow/math_ops.h"
#include "dflow/nn_ops.h"
#include "dflow/ops.h"
#include "dflow/partitioned_variables.h"
#include "dflow/replica_device_setter.h"
#include "dflow/scope.h"
#include "dflow/session.h"
#include "dflow/state_ops.h"
#include "dflow/train.h"
#include "dflow/variable.h"
