// Network helpers.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace dflow {

// `n` distinct free TCP ports on 127.0.0.1: binds n sockets to port 0 at once (so the ports
// differ), reads the ports, closes the sockets. Unavailable when the OS has none to give. (The
// ports are free when chosen; another process could take one before it is used.)
StatusOr<std::vector<int>> PickFreePorts(int n);

// Whether `host` (a task address's host part) can only name this machine's loopback interface:
// the names localhost, localhost6, ip6-localhost and ip6-loopback (any case), an IPv4 address in
// 127.0.0.0/8 in any form inet_aton accepts ("127.0.0.1", "127.1"), and the IPv6 loopback address
// in any spelling, bracketed or not ("[::1]", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.2").
bool IsLoopbackHost(const std::string& host);

// The address a task whose cluster address is host:port listens on: the loopback address itself
// for a loopback host ("127.0.0.1" for localhost, "[::1]" for the IPv6 names and addresses, the
// IPv4 address otherwise, so that "127.0.0.2" listens where clients connect), every interface
// ("[::]") for any other host.
std::string ListenAddress(const std::string& host, int port);

}  // namespace dflow
