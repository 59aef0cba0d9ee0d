#include "base/net.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dflow {

StatusOr<std::vector<int>> PickFreePorts(int n) {
  std::vector<int> sockets, ports;
  Status status;
  for (int i = 0; i < n && status.ok(); ++i) {
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) {
      status = errors::Unavailable("socket: ", strerror(errno));
      break;
    }
    sockets.push_back(s);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    if (bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      status = errors::Unavailable("cannot get a free port on 127.0.0.1: ", strerror(errno));
      break;
    }
    ports.push_back(ntohs(addr.sin_port));
  }
  for (int s : sockets) close(s);
  if (!status.ok()) return status;
  return ports;
}

}  // namespace dflow
