// Status helpers: the public dflow/status.h, plus the short macro names used inside dflow.
//
// RETURN_IF_ERROR and ASSIGN_OR_RETURN are internal spellings of DFLOW_RETURN_IF_ERROR and
// DFLOW_ASSIGN_OR_RETURN; they are defined only here, never in include/dflow, so that programs
// using dflow (and glog or absl's own macros) do not see them.
#pragma once

#include "dflow/status.h"

#define RETURN_IF_ERROR(expr) DFLOW_RETURN_IF_ERROR(expr)
#define ASSIGN_OR_RETURN(lhs, rexpr) DFLOW_ASSIGN_OR_RETURN(lhs, rexpr)
