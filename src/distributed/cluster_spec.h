// ClusterSpec, TaskConfig and their parsers live in the public API: include/dflow/cluster.h.
#pragma once

#include "base/status.h"
#include "dflow/cluster.h"
