// Network helpers.
#pragma once

#include <vector>

#include "base/status.h"

namespace dflow {

// `n` distinct free TCP ports on 127.0.0.1: binds n sockets to port 0 at once (so the ports
// differ), reads the ports, closes the sockets. Unavailable when the OS has none to give. (The
// ports are free when chosen; another process could take one before it is used.)
StatusOr<std::vector<int>> PickFreePorts(int n);

}  // namespace dflow
