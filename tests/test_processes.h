// What the multi-process tests share: where the built programs are, and child processes that
// cannot outlive the test.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <streambuf>
#include <string>
#include <thread>
#include <vector>

namespace dflow {

// The directory of the running test binary: build/bin, where the programs under test are.
inline std::string BinDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  std::string path(buf, n > 0 ? n : 0);
  return path.substr(0, path.rfind('/'));
}

// A child process running `args` (args[0] is the program's path). With a `log`, its stdout and
// stderr are appended to that file (a restarted task adds to its log); without, its stdout is
// dropped and its stderr is the test's. It gets SIGKILL when the test process dies, and when
// the object goes away.
class ChildProcess {
 public:
  explicit ChildProcess(std::vector<std::string> args, const std::string& log = "") {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // no orphan if the test process dies
      if (getppid() != parent) _exit(127);
      int fd = log.empty() ? open("/dev/null", O_WRONLY) : open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        if (!log.empty()) dup2(fd, 2);
      }
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~ChildProcess() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      kill(pid_, SIGCONT);  // a stopped child dies only once it runs
      waitpid(pid_, nullptr, 0);
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  void Signal(int sig) {
    if (pid_ > 0 && !exited_) kill(pid_, sig);
  }
  // Stops it (SIGSTOP) and waits, at most `seconds`, until every thread of it has stopped:
  // kill() returns before that, and a loaded machine may run the child's other threads for a
  // while. False if it did not stop in time (or is gone).
  bool Freeze(double seconds) {
    if (pid_ <= 0 || exited_ || kill(pid_, SIGSTOP) != 0) return false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (true) {
      int status = 0;
      pid_t r = waitpid(pid_, &status, WNOHANG | WUNTRACED);
      if (r == pid_ && WIFSTOPPED(status)) return true;
      if (r == pid_) {  // it ended instead
        exited_ = true;
        code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return false;
      }
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  // Lets a frozen child run again.
  void Thaw() { Signal(SIGCONT); }
  // Its exit code, or 128 + the signal that ended it; nullopt while it still runs after
  // `seconds`.
  std::optional<int> Wait(double seconds) {
    if (exited_) return code_;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (true) {
      int status = 0;
      if (pid_ > 0 && waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return code_;
      }
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  int code_ = -1;
};

// Text that one thread writes through a std::ostream (`std::ostream out(&text)`) while another
// reads it and waits, bounded, for what it needs to see: a test blocks on a program's output
// instead of sleeping.
class SharedText : public std::streambuf {
 public:
  std::string str() const {
    std::lock_guard<std::mutex> lock(mu_);
    return text_;
  }
  // Waits at most `seconds` until `done(text)` holds; false if it still does not.
  bool WaitFor(const std::function<bool(const std::string&)>& done, double seconds) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return done(text_); });
  }

 protected:
  // No buffer: every write reaches the text at once.
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    char ch = traits_type::to_char_type(c);
    xsputn(&ch, 1);
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      text_.append(s, static_cast<size_t>(n));
    }
    cv_.notify_all();
    return n;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string text_;
};

}  // namespace dflow
