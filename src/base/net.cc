#include "base/net.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

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

namespace {

// The IPv4 loopback address `host` names, in dotted form; empty when it names none.
std::string LoopbackIpv4(std::string host) {
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  in_addr a4{};
  if (inet_aton(host.c_str(), &a4) != 0) {
    if ((ntohl(a4.s_addr) >> 24) != 127) return "";
  } else {
    in6_addr a6{};
    if (inet_pton(AF_INET6, host.c_str(), &a6) != 1 || !IN6_IS_ADDR_V4MAPPED(&a6)) return "";
    std::memcpy(&a4.s_addr, a6.s6_addr + 12, 4);
    if ((ntohl(a4.s_addr) >> 24) != 127) return "";
  }
  char buf[INET_ADDRSTRLEN];
  return inet_ntop(AF_INET, &a4, buf, sizeof(buf)) != nullptr ? std::string(buf) : "";
}

bool IsLoopbackIpv6(std::string host) {
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  in6_addr a6{};
  return inet_pton(AF_INET6, host.c_str(), &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

std::string Lower(std::string host) {
  std::transform(host.begin(), host.end(), host.begin(), [](unsigned char c) { return std::tolower(c); });
  return host;
}

// "localhost" names both loopback addresses (clients try each); the others only ::1.
bool IsIpv4LoopbackName(const std::string& host) { return Lower(host) == "localhost"; }
bool IsIpv6LoopbackName(const std::string& host) {
  std::string h = Lower(host);
  return h == "localhost6" || h == "ip6-localhost" || h == "ip6-loopback";
}

}  // namespace

bool IsLoopbackHost(const std::string& host) {
  return IsIpv4LoopbackName(host) || IsIpv6LoopbackName(host) || IsLoopbackIpv6(host) || !LoopbackIpv4(host).empty();
}

std::string ListenAddress(const std::string& host, int port) {
  if (IsIpv4LoopbackName(host)) return absl::StrCat("127.0.0.1:", port);
  if (IsIpv6LoopbackName(host) || IsLoopbackIpv6(host)) return absl::StrCat("[::1]:", port);
  std::string v4 = LoopbackIpv4(host);
  if (!v4.empty()) return absl::StrCat(v4, ":", port);
  return absl::StrCat("[::]:", port);
}

}  // namespace dflow
