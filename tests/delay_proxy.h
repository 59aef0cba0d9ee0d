// DelayProxy: a TCP proxy on 127.0.0.1 for tests of links that are slow or cut. Every byte it
// forwards, in either direction, is delivered `one_way_delay_ms` after it arrived (a link with
// that latency and unlimited bandwidth). SetCut(true) partitions the link: bytes already
// received and those still arriving are held, and new connections are accepted but forward
// nothing, as when packets are dropped; SetCut(false) heals it and the held bytes go on in order,
// as TCP's retransmissions would deliver them. A side that closes its connection closes the
// other side's after the delay; a connection to a target where nothing serves is reset.
//
// Header-only; for tests. Threads: one accepting, two per connection and direction. The
// destructor stops everything and joins every thread (bounded: sockets are shut down first).
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dflow {

class DelayProxy {
 public:
  // Forwards to 127.0.0.1:`target_port`. port() is 0 when it could not listen.
  DelayProxy(int target_port, int64_t one_way_delay_ms) : target_port_(target_port), delay_ms_(one_way_delay_ms) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        listen(listen_fd_, 1024) != 0 || getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return;
    }
    port_ = ntohs(addr.sin_port);
    if (pipe2(wake_, O_CLOEXEC) != 0) {
      port_ = 0;
      return;
    }
    acceptor_ = std::thread([this] { Accept(); });
  }

  ~DelayProxy() {
    stopping_ = true;
    if (wake_[1] >= 0) {
      char b = 0;
      ssize_t ignored = write(wake_[1], &b, 1);
      (void)ignored;
    }
    if (acceptor_.joinable()) acceptor_.join();
    std::vector<std::shared_ptr<Pump>> pumps;
    {
      std::lock_guard<std::mutex> l(mu_);
      pumps.swap(pumps_);
    }
    for (auto& p : pumps) p->Stop();
    for (auto& p : pumps) p->Join();
    for (int fd : fds_) close(fd);
    for (int fd : {listen_fd_, wake_[0], wake_[1]}) {
      if (fd >= 0) close(fd);
    }
  }

  DelayProxy(const DelayProxy&) = delete;
  DelayProxy& operator=(const DelayProxy&) = delete;

  int port() const { return port_; }
  // Connections accepted so far.
  int connections() const { return connections_.load(); }
  // Blocks until `n` connections were accepted, at most `seconds`; false on timeout.
  bool WaitForConnections(int n, double seconds) {
    std::unique_lock<std::mutex> l(mu_);
    return connected_.wait_for(l, std::chrono::duration<double>(seconds), [&] { return connections_.load() >= n; });
  }

  // Every byte forwarded so far, both directions interleaved in arrival order (what a capture of
  // the link would show).
  std::string Captured() const {
    std::lock_guard<std::mutex> l(capture_->mu);
    return capture_->bytes;
  }

  void SetCut(bool cut) {
    std::lock_guard<std::mutex> l(mu_);
    cut_->store(cut);
    for (auto& p : pumps_) p->Wake();
  }

 private:
  using Clock = std::chrono::steady_clock;

  struct Capture {
    std::mutex mu;
    std::string bytes;
  };

  // One direction of one connection: a reader that stamps what it reads and a writer that
  // writes it when due and the link is not cut.
  struct Pump {
    Pump(int from, int to, int64_t delay_ms, std::shared_ptr<std::atomic<bool>> cut, std::shared_ptr<Capture> capture)
        : from(from),
          to(to),
          delay(std::chrono::milliseconds(delay_ms)),
          cut(std::move(cut)),
          capture(std::move(capture)) {}
    struct Chunk {
      Clock::time_point due;
      std::string bytes;  // empty: the sender closed
    };
    const int from, to;
    const Clock::duration delay;
    std::shared_ptr<std::atomic<bool>> cut;
    std::shared_ptr<Capture> capture;
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Chunk> queue;
    bool stopped = false;
    std::thread reader, writer;

    void Start() {
      reader = std::thread([this] { Read(); });
      writer = std::thread([this] { Write(); });
    }
    void Read() {
      char buf[65536];
      while (true) {
        ssize_t n = read(from, buf, sizeof(buf));
        if (n < 0 && errno == EINTR) continue;
        if (n > 0) {
          std::lock_guard<std::mutex> c(capture->mu);
          capture->bytes.append(buf, static_cast<size_t>(n));
        }
        std::lock_guard<std::mutex> l(mu);
        queue.push_back({Clock::now() + delay, n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string()});
        cv.notify_all();
        if (n <= 0) return;
      }
    }
    void Write() {
      std::unique_lock<std::mutex> l(mu);
      while (true) {
        if (stopped) return;
        if (queue.empty() || cut->load()) {
          cv.wait(l);
          continue;
        }
        if (Clock::now() < queue.front().due) {
          cv.wait_until(l, queue.front().due);
          continue;
        }
        Chunk c = std::move(queue.front());
        queue.pop_front();
        l.unlock();
        bool ok = !c.bytes.empty();
        for (size_t off = 0; ok && off < c.bytes.size();) {
          ssize_t n = send(to, c.bytes.data() + off, c.bytes.size() - off, MSG_NOSIGNAL);
          if (n < 0 && errno == EINTR) continue;
          ok = n > 0;
          if (ok) off += static_cast<size_t>(n);
        }
        if (!ok) {
          // The sender closed, or the receiver is gone: both sides of the connection end.
          shutdown(to, SHUT_RDWR);
          shutdown(from, SHUT_RDWR);
          return;
        }
        l.lock();
      }
    }
    void Wake() {
      std::lock_guard<std::mutex> l(mu);
      cv.notify_all();
    }
    void Stop() {
      shutdown(from, SHUT_RDWR);
      shutdown(to, SHUT_RDWR);
      std::lock_guard<std::mutex> l(mu);
      stopped = true;
      cv.notify_all();
    }
    void Join() {
      if (reader.joinable()) reader.join();
      if (writer.joinable()) writer.join();
    }
  };

  void Accept() {
    while (!stopping_) {
      pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      if (poll(fds, 2, -1) < 0 && errno != EINTR) return;
      if (stopping_ || fds[1].revents != 0) return;
      if (fds[0].revents == 0) continue;
      int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      int server = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(static_cast<uint16_t>(target_port_));
      if (server < 0 || connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        // Nothing serves behind the proxy: the client's connection is reset, as close to a refused
        // one as a proxy that has accepted it can come.
        linger reset{1, 0};
        setsockopt(client, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
        close(client);
        if (server >= 0) close(server);
        continue;
      }
      int one = 1;
      setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      std::lock_guard<std::mutex> l(mu_);
      ++connections_;
      connected_.notify_all();
      auto up = std::make_shared<Pump>(client, server, delay_ms_, cut_, capture_);
      auto down = std::make_shared<Pump>(server, client, delay_ms_, cut_, capture_);
      up->Start();
      down->Start();
      pumps_.push_back(up);
      pumps_.push_back(down);
      fds_.push_back(client);
      fds_.push_back(server);
    }
  }

  const int target_port_;
  const int64_t delay_ms_;
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::thread acceptor_;
  std::mutex mu_;
  std::condition_variable connected_;  // a connection was accepted
  std::shared_ptr<std::atomic<bool>> cut_ = std::make_shared<std::atomic<bool>>(false);
  std::shared_ptr<Capture> capture_ = std::make_shared<Capture>();
  std::vector<std::shared_ptr<Pump>> pumps_;
  std::vector<int> fds_;  // the connections' sockets, closed once every pump has stopped
};

}  // namespace dflow
