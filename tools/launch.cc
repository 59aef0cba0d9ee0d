#include "tools/launch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <ostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/env.h"
#include "base/net.h"
#include "dflow/flags.h"
#include "distributed/cluster_spec.h"
#include "framework/credentials.h"

extern char** environ;

namespace dflow::tools {
namespace {

constexpr char kUsage[] =
    "usage: dflow launch --ps N --workers M [--base_port P] [--timeout SECONDS] [--grace_period SECONDS]\n"
    "                    [--finish_timeout SECONDS] [--fail_fast] [--ps_trainer] [--mutual_tls]\n"
    "                    [--credentials DIR] [--no_tls]\n"
    "                    [--] TRAINER [ARGS...]\n"
    "Each task gets fresh credentials for the cluster in DFLOW_CREDENTIALS (TLS, a cluster secret; the\n"
    "chief's secret for worker 0 only); --mutual_tls also makes the servers require client certificates;\n"
    "--credentials DIR uses DIR/chief and DIR/member from `dflow credentials create DIR` instead;\n"
    "--no_tls keeps the secret but sends plaintext (loopback traffic is visible to root only).\n"
    "ps tasks run `dflow server`; with --ps_trainer they run TRAINER ARGS too (--job_name=ps), as in\n"
    "TensorFlow's guide, where one program serves as ps (server.join()) and trains as worker.\n"
    "The chief (worker 0) ends the launch. When it exits 0 the job is complete: the launcher waits up to\n"
    "--finish_timeout (10 s) for the other tasks to exit, stops those left (SIGTERM, then SIGKILL after\n"
    "--grace_period, 5 s) and exits 0. Another worker that fails is reported and the others go on; with\n"
    "--fail_fast it stops every task and the exit code is 1. The chief failing, a ps task failing before\n"
    "the chief finished, a task that cannot start and --timeout stop every task; the exit code is 1.\n";
constexpr int kMaxTasks = 256;
constexpr size_t kMaxLineBytes = size_t{1} << 20;  // a longer unfinished line is written out in pieces
constexpr double kReapAfterKillS = 5;              // how long to wait for tasks after SIGKILL

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string Seconds(double s) { return absl::StrCat(s); }

// ---- signals: a self-pipe that SIGINT/SIGTERM write their number into ----

std::atomic<int> g_signal_fd{-1};
std::atomic<bool> g_handlers_owned{false};

extern "C" void OnStopSignal(int signo) {
  int saved = errno;
  int fd = g_signal_fd.load();
  if (fd >= 0) {
    unsigned char b = static_cast<unsigned char>(signo);
    ssize_t ignored = write(fd, &b, 1);
    (void)ignored;
  }
  errno = saved;
}

// Owns the handlers while a launch runs. Only the first of concurrent launches in one process
// installs them; the others have no signal handling (tests only).
class SignalGuard {
 public:
  SignalGuard() {
    if (pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0) {
      fds_[0] = fds_[1] = -1;
      return;
    }
    if (g_handlers_owned.exchange(true)) return;
    owned_ = true;
    g_signal_fd.store(fds_[1]);
    struct sigaction sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.sa_handler = OnStopSignal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
    struct sigaction ignore;
    std::memset(&ignore, 0, sizeof(ignore));
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &old_pipe_);
  }
  ~SignalGuard() {
    if (owned_) {
      sigaction(SIGINT, &old_int_, nullptr);
      sigaction(SIGTERM, &old_term_, nullptr);
      sigaction(SIGPIPE, &old_pipe_, nullptr);
      g_signal_fd.store(-1);
      g_handlers_owned.store(false);
    }
    if (fds_[0] >= 0) close(fds_[0]);
    if (fds_[1] >= 0) close(fds_[1]);
  }
  int read_fd() const { return fds_[0]; }

 private:
  int fds_[2];
  bool owned_ = false;
  struct sigaction old_int_, old_term_, old_pipe_;
};

// ---- tasks ----

struct Task {
  std::string name;  // "ps 0", "worker 1"
  bool is_worker = false;
  int index = 0;  // --task_index
  std::vector<std::string> argv;
  std::vector<std::string> env;  // its whole environment ("NAME=value")
  pid_t pid = -1;                // also its process group
  int fd = -1;                   // read end of its stdout+stderr pipe; -1 once closed
  std::string partial;
  bool exited = false;
  bool status_known = true;
  int wait_status = 0;
};

std::string DescribeExit(const Task& t) {
  if (!t.status_known) return "exited with an unknown status";
  if (WIFEXITED(t.wait_status)) return absl::StrCat("exited with status ", WEXITSTATUS(t.wait_status));
  if (WIFSIGNALED(t.wait_status)) {
    int sig = WTERMSIG(t.wait_status);
    const char* name = strsignal(sig);
    return absl::StrCat("was killed by signal ", sig, name != nullptr ? absl::StrCat(" (", name, ")") : "");
  }
  return "stopped";
}

bool Succeeded(const Task& t) { return t.status_known && WIFEXITED(t.wait_status) && WEXITSTATUS(t.wait_status) == 0; }

// The chief is worker 0 (TensorFlow's rule for the ps/worker layout): its end is the job's end.
bool IsChief(const Task& t) { return t.is_worker && t.index == 0; }

// A private directory (mode 0700 under $TMPDIR) with the chief's and the members' credentials,
// removed with everything in it when the launch ends.
class CredentialsDir {
 public:
  CredentialsDir() = default;
  ~CredentialsDir() {
    if (root_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  Status Write(const ClusterCredentials& creds) {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/dflow-launch-XXXXXX");
    if (::mkdtemp(tmpl.data()) == nullptr) return errors::Internal("mkdtemp ", tmpl, ": ", strerror(errno));
    root_ = tmpl;  // mkdtemp makes it 0700
    RETURN_IF_ERROR(WriteCredentials(creds, chief()));
    return WriteCredentials(creds.WithoutChief(), member());
  }
  // Someone else's directory (with chief/ and member/), left in place.
  void Use(const std::string& dir) { given_ = dir; }
  std::string chief() const { return (given_.empty() ? root_ : given_) + "/chief"; }
  std::string member() const { return (given_.empty() ? root_ : given_) + "/member"; }

 private:
  std::string root_, given_;
};

// Forks and execs the task with its output into a fresh pipe. Between fork and exec the child
// uses only async-signal-safe calls; a failed exec reports errno through a close-on-exec pipe.
Status StartTask(Task* t) {
  int out_pipe[2], exec_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return errors::Internal("pipe: ", strerror(errno));
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    int e = errno;
    close(out_pipe[0]);
    close(out_pipe[1]);
    return errors::Internal("pipe: ", strerror(e));
  }
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  std::vector<char*> argv, envp;
  for (std::string& a : t->argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& e : t->env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    // A task dies with the launcher, even when the launcher is killed with SIGKILL.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    setpgid(0, 0);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(out_pipe[1], STDERR_FILENO);
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGPIPE, &dfl, nullptr);
    sigaction(SIGINT, &dfl, nullptr);
    sigaction(SIGTERM, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execvpe(argv[0], argv.data(), envp.data());
    int e = errno;
    ssize_t ignored = write(exec_pipe[1], &e, sizeof(e));
    (void)ignored;
    _exit(127);
  }
  int fork_errno = errno;
  close(out_pipe[1]);
  close(exec_pipe[1]);
  if (devnull >= 0) close(devnull);
  if (pid < 0) {
    close(out_pipe[0]);
    close(exec_pipe[0]);
    return errors::Unavailable("cannot start ", t->name, ": fork: ", strerror(fork_errno));
  }
  setpgid(pid, pid);  // also done by the child; whichever runs first makes the group
  t->pid = pid;
  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(exec_pipe[0], &exec_errno, sizeof(exec_errno));
  } while (n < 0 && errno == EINTR);
  close(exec_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof(exec_errno))) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    t->exited = true;
    t->wait_status = status;
    close(out_pipe[0]);
    return errors::FailedPrecondition("cannot start ", t->name, ": ", t->argv[0], ": ", strerror(exec_errno));
  }
  fcntl(out_pipe[0], F_SETFL, fcntl(out_pipe[0], F_GETFL) | O_NONBLOCK);
  t->fd = out_pipe[0];
  return absl::OkStatus();
}

void WriteLine(const Task& t, absl::string_view line, std::ostream& out) {
  out << '[' << t.name << "] ";
  out.write(line.data(), static_cast<std::streamsize>(line.size()));
  out << '\n';
}

// Writes the finished lines in t->partial; keeps the unfinished rest.
void EmitLines(Task* t, std::ostream& out) {
  size_t start = 0;
  while (true) {
    size_t nl = t->partial.find('\n', start);
    if (nl == std::string::npos) break;
    WriteLine(*t, absl::string_view(t->partial).substr(start, nl - start), out);
    start = nl + 1;
  }
  t->partial.erase(0, start);
  if (t->partial.size() >= kMaxLineBytes) {
    WriteLine(*t, t->partial, out);
    t->partial.clear();
  }
}

void CloseOutput(Task* t, std::ostream& out) {
  if (t->fd < 0) return;
  close(t->fd);
  t->fd = -1;
  if (!t->partial.empty()) {
    WriteLine(*t, t->partial, out);
    t->partial.clear();
  }
}

// Reads what the task has written (a bounded amount per call, so no task starves the others).
void ReadOutput(Task* t, std::ostream& out) {
  char buf[65536];
  for (int round = 0; round < 16 && t->fd >= 0; ++round) {
    ssize_t n = read(t->fd, buf, sizeof(buf));
    if (n > 0) {
      t->partial.append(buf, static_cast<size_t>(n));
      EmitLines(t, out);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    CloseOutput(t, out);  // EOF or a read error
  }
}

// Signals the task's process group (the task and whatever it started), if anything may be left.
void SignalTask(const Task& t, int sig) {
  if (t.pid > 0 && (!t.exited || t.fd >= 0)) kill(-t.pid, sig);
}

std::string HostList(const std::vector<int>& ports) {
  std::vector<std::string> hosts;
  for (int p : ports) hosts.push_back(absl::StrCat("127.0.0.1:", p));
  return absl::StrJoin(hosts, ",");
}

StatusOr<std::vector<std::string>> DefaultServerCommand() {
  char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return errors::FailedPrecondition("cannot find the dflow binary: /proc/self/exe: ", strerror(errno));
  std::string self(path, static_cast<size_t>(n));
  size_t slash = self.rfind('/');
  std::string dir = slash == std::string::npos ? "." : self.substr(0, slash);
  return std::vector<std::string>{dir + "/dflow", "server"};
}

// Checks that the ports base, base+1, ... can be bound on 127.0.0.1 now.
Status CheckPortsFree(int base, int n) {
  for (int p = base; p < base + n; ++p) {
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return errors::Unavailable("socket: ", strerror(errno));
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(p));
    int rc = bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    int e = errno;
    close(s);
    if (rc != 0) return errors::Unavailable("--base_port: port ", p, " on 127.0.0.1 is not free: ", strerror(e));
  }
  return absl::OkStatus();
}

// ---- RunLaunch's pieces ----

// The ports base, base+1, ... when base_port is given (checked free now), else n free ones.
StatusOr<std::vector<int>> ChoosePorts(int base_port, int n) {
  if (base_port <= 0) return PickFreePorts(n);
  RETURN_IF_ERROR(CheckPortsFree(base_port, n));
  std::vector<int> ports;
  for (int i = 0; i < n; ++i) ports.push_back(base_port + i);
  return ports;
}

Status WriteFreshCredentials(const LaunchOptions& options, CredentialsDir* dir) {
  ASSIGN_OR_RETURN(ClusterCredentials creds, GenerateClusterCredentials({"127.0.0.1"}, options.mutual_tls));
  if (options.no_tls) creds = creds.WithoutTls();
  return dir->Write(creds);
}

// --credentials DIR: DIR/chief and DIR/member must load.
Status CheckGivenCredentials(const std::string& dir) {
  for (const char* part : {"chief", "member"}) {
    auto loaded = LoadCredentials(JoinPath(dir, part));
    if (!loaded.ok()) return errors::Annotate(loaded.status(), "--credentials: ");
  }
  return absl::OkStatus();
}

// The ps tasks, then the workers, each with the cluster flags and its credentials in the
// environment (the launcher's own, without DFLOW_CREDENTIALS).
std::vector<Task> MakeTasks(const LaunchOptions& options, const std::string& ps_hosts, const std::string& worker_hosts,
                            const std::vector<std::string>& server_cmd, const CredentialsDir& creds_dir) {
  std::vector<std::string> base_env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (absl::StartsWith(*e, absl::StrCat(kCredentialsEnv, "="))) continue;
    base_env.push_back(*e);
  }
  std::vector<Task> tasks(options.num_ps + options.num_workers);
  for (size_t i = 0; i < tasks.size(); ++i) {
    Task& t = tasks[i];
    t.is_worker = static_cast<int>(i) >= options.num_ps;
    t.index = t.is_worker ? static_cast<int>(i) - options.num_ps : static_cast<int>(i);
    t.name = absl::StrCat(t.is_worker ? "worker " : "ps ", t.index);
    t.argv = t.is_worker || options.ps_trainer ? options.trainer : server_cmd;
    t.argv.push_back("--ps_hosts=" + ps_hosts);
    t.argv.push_back("--worker_hosts=" + worker_hosts);
    t.argv.push_back(t.is_worker ? "--job_name=worker" : "--job_name=ps");
    t.argv.push_back(absl::StrCat("--task_index=", t.index));
    t.env = base_env;
    t.env.push_back(absl::StrCat(kCredentialsEnv, "=", IsChief(t) ? creds_dir.chief() : creds_dir.member()));
  }
  return tasks;
}

// Runs the tasks and decides the launch's end and exit code: the chief's exit, other tasks'
// failures, --timeout, --finish_timeout, signals to the launcher; then stops what is left
// (SIGTERM, SIGKILL after --grace_period).
class Supervisor {
 public:
  Supervisor(const LaunchOptions& options, std::vector<Task>* tasks, std::ostream& out, std::ostream& err)
      : options_(options), tasks_(*tasks), out_(out), err_(err), start_(Clock::now()) {}

  int exit_code() const { return exit_code_; }
  bool stopping() const { return stopping_; }

  // Starts every task; a task that cannot start stops the launch.
  void StartAll() {
    for (Task& t : tasks_) {
      if (Status s = StartTask(&t); !s.ok()) {
        err_ << "dflow launch: " << s.message() << "\n";
        exit_code_ = 1;
        BeginStop();
        return;
      }
      err_ << "dflow launch: started " << t.name << " (pid " << t.pid << ")" << std::endl;
    }
  }

  // Waits up to 50 ms for output or a signal (exits are polled: a SIGCHLD handler would disturb
  // the rest of a process that runs the launcher in-process) and handles what came.
  void WaitForOutputOrSignal(int signal_fd) {
    std::vector<pollfd> fds;
    std::vector<Task*> owners;  // nullptr: the signal pipe
    if (signal_fd >= 0) {
      fds.push_back({signal_fd, POLLIN, 0});
      owners.push_back(nullptr);
    }
    for (Task& t : tasks_) {
      if (t.fd >= 0) {
        fds.push_back({t.fd, POLLIN, 0});
        owners.push_back(&t);
      }
    }
    if (poll(fds.data(), fds.size(), 50) <= 0) return;
    for (size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      if (owners[k] == nullptr) {
        OnSignal(fds[k].fd);
      } else {
        ReadOutput(owners[k], out_);
      }
    }
    out_.flush();
  }

  // Reaps the tasks that exited and judges each exit.
  void ReapExited() {
    for (Task& t : tasks_) {
      if (t.exited || t.pid <= 0) continue;
      int status = 0;
      pid_t r = waitpid(t.pid, &status, WNOHANG);
      if (r == 0 || (r < 0 && errno == EINTR)) continue;
      t.exited = true;
      t.wait_status = status;
      t.status_known = r == t.pid;   // ECHILD: someone else reaped it (SIGCHLD ignored)
      if (!stopping_) JudgeExit(t);  // when stopping, exits are expected
    }
  }

  // Before stopping: the job's completion, --finish_timeout and --timeout.
  void CheckCompletionAndTimeouts() {
    const bool all_exited = std::all_of(tasks_.begin(), tasks_.end(), [](const Task& t) { return t.exited; });
    if (job_complete_ && all_exited) {
      BeginStop();  // what is left are children that tasks left behind in their process groups
    } else if (job_complete_ && SecondsSince(finish_time_) >= options_.finish_timeout_s) {
      for (const Task& t : tasks_) {
        if (!t.exited) {
          err_ << "dflow launch: " << t.name << " has not exited " << Seconds(options_.finish_timeout_s)
               << " s after the chief finished; stopping it" << std::endl;
        }
      }
      BeginStop();
    } else if (options_.timeout_s > 0 && SecondsSince(start_) >= options_.timeout_s) {
      // After the chief's success this only shortens the wait for the others.
      err_ << "dflow launch: timed out after " << Seconds(options_.timeout_s) << " s; stopping all tasks" << std::endl;
      if (!job_complete_) exit_code_ = 1;
      BeginStop();
    }
  }

  // While stopping: true once every task has exited and closed its output, or when tasks
  // outlive SIGKILL by kReapAfterKillS; sends SIGKILL after the grace period.
  bool StoppedAll() {
    bool all_exited = true, all_closed = true;
    for (const Task& t : tasks_) {
      all_exited = all_exited && (t.exited || t.pid <= 0);
      all_closed = all_closed && t.fd < 0;
    }
    if (all_exited && all_closed) return true;
    if (!killed_ && SecondsSince(stop_time_) >= options_.grace_period_s) {
      for (const Task& t : tasks_) {
        if (t.pid > 0 && !t.exited) {
          err_ << "dflow launch: " << t.name << " did not stop within " << Seconds(options_.grace_period_s)
               << " s of SIGTERM; killing it" << std::endl;
        }
        SignalTask(t, SIGKILL);
      }
      killed_ = true;
      kill_time_ = Clock::now();
    }
    if (killed_ && SecondsSince(kill_time_) >= kReapAfterKillS) {
      for (Task& t : tasks_) {
        if (t.pid > 0 && !t.exited) {
          err_ << "dflow launch: " << t.name << " (pid " << t.pid << ") did not exit even after SIGKILL" << std::endl;
        }
        CloseOutput(&t, out_);  // whoever still holds the pipe left the task's process group
      }
      if (exit_code_ == 0) exit_code_ = 1;
      return true;
    }
    return false;
  }

 private:
  void BeginStop() {
    if (stopping_) return;
    stopping_ = true;
    stop_time_ = Clock::now();
    for (const Task& t : tasks_) SignalTask(t, SIGTERM);
  }

  void FailAndStop(const std::string& what) {
    err_ << "dflow launch: " << what << "; stopping all tasks" << std::endl;
    exit_code_ = 1;
    BeginStop();
  }

  // SIGINT or SIGTERM to the launcher: the first stops every task, a second kills them.
  void OnSignal(int fd) {
    unsigned char sig = 0, b;
    while (read(fd, &b, 1) == 1) sig = b;
    if (sig == 0) return;
    if (!stopping_) {
      const char* name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
      err_ << "dflow launch: got " << name << "; stopping all tasks" << std::endl;
      exit_code_ = 128 + sig;
      BeginStop();
    } else if (!killed_) {
      err_ << "dflow launch: got a second signal; killing all tasks" << std::endl;
      for (const Task& t : tasks_) SignalTask(t, SIGKILL);
      killed_ = true;
      kill_time_ = Clock::now();
    }
  }

  // What a task's exit means for the launch, before it stops.
  void JudgeExit(const Task& t) {
    if (Succeeded(t)) {
      // Another worker that exits 0 has done its part; a ps task that exits 0 was told that the
      // job is complete (NotifyJobComplete).
      if (!IsChief(t)) return;
      job_complete_ = true;
      finish_time_ = Clock::now();
      err_ << "dflow launch: " << t.name << " (the chief) exited 0: the job is complete" << std::endl;
    } else if (IsChief(t)) {
      FailAndStop(absl::StrCat(t.name, " (the chief) failed: it ", DescribeExit(t)));
    } else if (t.is_worker && options_.fail_fast) {
      FailAndStop(absl::StrCat(t.name, " failed: it ", DescribeExit(t)));
    } else if (job_complete_) {
      err_ << "dflow launch: " << t.name << " " << DescribeExit(t) << " after the job completed" << std::endl;
    } else if (t.is_worker) {
      // A synchronous job with backup workers, or an asynchronous one, trains on without it;
      // if it cannot, the chief fails or --timeout ends the launch.
      err_ << "dflow launch: " << t.name << " " << DescribeExit(t) << "; the other tasks go on" << std::endl;
    } else {
      // Nothing restarts a ps task under the launcher: the workers cannot finish without it.
      FailAndStop(absl::StrCat(t.name, " ", DescribeExit(t), " before the chief finished"));
    }
  }

  const LaunchOptions& options_;
  std::vector<Task>& tasks_;
  std::ostream& out_;
  std::ostream& err_;
  const Clock::time_point start_;
  int exit_code_ = 0;
  // job_complete_: the chief exited 0 (at finish_time_); the other tasks have --finish_timeout to exit by themselves.
  bool job_complete_ = false, stopping_ = false, killed_ = false;
  Clock::time_point finish_time_, stop_time_, kill_time_;
};

}  // namespace

StatusOr<LaunchOptions> ParseLaunchArgs(const std::vector<std::string>& args) {
  FlagSpec spec;
  spec.values = {"--ps",           "--workers",        "--base_port",  "--timeout",
                 "--grace_period", "--finish_timeout", "--server_cmd", "--credentials"};
  spec.switches = {"--fail_fast", "--ps_trainer", "--mutual_tls", "--no_tls"};
  spec.stop_at_positional = true;  // TRAINER ARGS...
  ASSIGN_OR_RETURN(ParsedFlags flags, ParsedFlags::Parse(args, spec));
  LaunchOptions o;
  auto int_value = [&](const char* name, int fallback, int min, int max, int* out) -> Status {
    ASSIGN_OR_RETURN(int64_t v, flags.GetInt64(name, fallback, min, max));
    *out = static_cast<int>(v);
    return absl::OkStatus();
  };
  // A number of seconds in [0, 1e7], or in (0, 1e7] when `positive`.
  auto seconds_value = [&](const char* name, bool positive, double* out) -> Status {
    auto v = flags.GetDouble(name, *out);
    if (!v.ok() || *v < 0 || *v > 1e7 || (positive && *v <= 0)) {
      return errors::InvalidArgument(name, " takes a number of seconds", positive ? " > 0" : " >= 0", ", got '",
                                     flags.GetString(name), "'");
    }
    *out = *v;
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(int_value("--ps", 0, 0, kMaxTasks, &o.num_ps));
  RETURN_IF_ERROR(int_value("--workers", 0, 1, kMaxTasks, &o.num_workers));
  RETURN_IF_ERROR(int_value("--base_port", 0, 1, 65535, &o.base_port));
  if (flags.Has("--timeout")) RETURN_IF_ERROR(seconds_value("--timeout", true, &o.timeout_s));
  RETURN_IF_ERROR(seconds_value("--grace_period", false, &o.grace_period_s));
  RETURN_IF_ERROR(seconds_value("--finish_timeout", false, &o.finish_timeout_s));
  if (flags.Has("--credentials")) {
    o.credentials_dir = flags.GetString("--credentials");
    if (o.credentials_dir.empty()) return errors::InvalidArgument("--credentials is empty");
  }
  if (flags.Has("--server_cmd")) {
    o.server_cmd = absl::StrSplit(flags.GetString("--server_cmd"), ' ', absl::SkipEmpty());
    if (o.server_cmd.empty()) return errors::InvalidArgument("--server_cmd is empty");
  }
  o.fail_fast = flags.Has("--fail_fast");
  o.ps_trainer = flags.Has("--ps_trainer");
  o.mutual_tls = flags.Has("--mutual_tls");
  o.no_tls = flags.Has("--no_tls");
  o.trainer = flags.positional();
  if (!flags.Has("--workers")) return errors::InvalidArgument("--workers is missing");
  if (o.no_tls && o.mutual_tls) return errors::InvalidArgument("--no_tls and --mutual_tls exclude each other");
  if (o.trainer.empty()) return errors::InvalidArgument("TRAINER is missing");
  if (o.num_ps + o.num_workers > kMaxTasks) {
    return errors::InvalidArgument("--ps plus --workers is ", o.num_ps + o.num_workers, ", more than ", kMaxTasks);
  }
  if (o.base_port > 0 && o.base_port + o.num_ps + o.num_workers - 1 > 65535) {
    return errors::InvalidArgument("--base_port ", o.base_port, " leaves no room for ", o.num_ps + o.num_workers,
                                   " ports below 65536");
  }
  return o;
}

int RunLaunch(const LaunchOptions& options, std::ostream& out, std::ostream& err) {
  const int n = options.num_ps + options.num_workers;
  auto fail = [&](const Status& s, int code) {
    err << "dflow launch: " << s.message() << "\n";
    return code;
  };
  auto ports = ChoosePorts(options.base_port, n);
  if (!ports.ok()) return fail(ports.status(), 1);
  const std::string ps_hosts = HostList(std::vector<int>(ports->begin(), ports->begin() + options.num_ps));
  const std::string worker_hosts = HostList(std::vector<int>(ports->begin() + options.num_ps, ports->end()));
  auto config = TaskConfigFromFlags(ps_hosts, worker_hosts, "worker", 0);
  if (!config.ok()) return fail(config.status(), 1);
  std::vector<std::string> server_cmd = options.server_cmd;
  if (server_cmd.empty()) {
    auto cmd = DefaultServerCommand();
    if (!cmd.ok()) return fail(cmd.status(), 1);
    server_cmd = *std::move(cmd);
  }
  // Fresh credentials for this cluster, in a private directory removed when the launch ends: the
  // chief's copy holds the chief's secret, the others' only its hash.
  // With --credentials DIR, DIR/chief and DIR/member are used as they are.
  CredentialsDir creds_dir;
  if (options.credentials_dir.empty()) {
    if (Status s = WriteFreshCredentials(options, &creds_dir); !s.ok()) return fail(s, 1);
  } else {
    if (Status s = CheckGivenCredentials(options.credentials_dir); !s.ok()) return fail(s, 2);
    creds_dir.Use(options.credentials_dir);
  }
  std::vector<Task> tasks = MakeTasks(options, ps_hosts, worker_hosts, server_cmd, creds_dir);
  err << "dflow launch: cluster " << config->cluster.DebugString() << std::endl;

  SignalGuard signals;
  Supervisor supervisor(options, &tasks, out, err);
  supervisor.StartAll();
  while (true) {
    supervisor.WaitForOutputOrSignal(signals.read_fd());
    supervisor.ReapExited();
    if (!supervisor.stopping()) {
      supervisor.CheckCompletionAndTimeouts();
    } else if (supervisor.StoppedAll()) {
      break;
    }
  }
  out.flush();
  return supervisor.exit_code();
}

int RunLaunchCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    out << kUsage;
    return 0;
  }
  auto options = ParseLaunchArgs(args);
  if (!options.ok()) {
    err << "dflow launch: " << options.status().message() << "\n" << kUsage;
    return 2;
  }
  return RunLaunch(*options, out, err);
}

}  // namespace dflow::tools
