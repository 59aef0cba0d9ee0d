// `dflow launch` run in-process with small shell scripts as the trainer and as a fake server.
// Every launch has a --timeout as a safety net; only 127.0.0.1 and OS-assigned ports are used.
#include "tools/launch.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/commands.h"

namespace dflow::tools {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

struct Result {
  int code;
  std::string out, err;
  double seconds;
};

// Sets IDX to the --task_index the launcher appended.
constexpr char kGetIndex[] =
    "IDX=\n"
    "for a in \"$@\"; do case \"$a\" in --task_index=*) IDX=\"${a#--task_index=}\";; esac; done\n";

class LaunchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    static int runs = 0;  // a fresh folder per run, also under --gtest_repeat
    dir_ = absl::StrCat(::testing::TempDir(), "/launch_", info->name(), "_", getpid(), "_", runs++);
    mkdir(dir_.c_str(), 0755);
  }

  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  // Writes an executable /bin/sh script and returns its path.
  std::string Script(const std::string& name, const std::string& body) {
    std::string path = dir_ + "/" + name;
    {
      std::ofstream f(path, std::ios::trunc);
      f << "#!/bin/sh\n" << body;
    }
    chmod(path.c_str(), 0755);
    return path;
  }

  // A fake `dflow server`: announces itself, marks itself ready, and serves until SIGTERM or until
  // a trainer completes the job (CompleteJob()); then it exits 0.
  std::string FakeServer() {
    return Script("fake_server.sh", absl::StrCat(kGetIndex,
                                                 "trap 'echo \"ps $IDX got TERM\"; exit 0' TERM\n"
                                                 "echo \"serving $*\"\n"
                                                 "echo \"pid $$\"\n"
                                                 "touch \"",
                                                 dir_, "/ps_ready_$IDX\"\n", "while [ ! -f \"", dir_,
                                                 "/job_complete\" ]; do sleep 0.05; done\n"
                                                 "echo \"ps $IDX: the job is complete\"\n"));
  }

  // A shell line that tells the fake servers that the job is complete.
  std::string CompleteJob() { return absl::StrCat("touch \"", dir_, "/job_complete\"\n"); }

  // Shell lines that wait (at most 10 s) until the fake servers 0..n-1 are ready.
  std::string WaitForPs(int n) {
    std::string s;
    for (int i = 0; i < n; ++i) {
      absl::StrAppend(&s, "i=0; while [ ! -f \"", dir_, "/ps_ready_", i,
                      "\" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\n");
    }
    return s;
  }

  Result Launch(std::vector<std::string> args) {
    std::ostringstream out, err;
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(args.at(0), "launch");
    int code = RunLaunchCommand(std::vector<std::string>(args.begin() + 1, args.end()), out, err);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return {code, out.str(), err.str(), seconds};
  }

  std::string dir_;
};

std::vector<std::string> Lines(const std::string& text) { return absl::StrSplit(text, '\n', absl::SkipEmpty()); }

// The value of --flag=... in a line of text.
std::string FlagIn(const std::string& line, const std::string& flag) {
  size_t at = line.find(flag + "=");
  if (at == std::string::npos) return "";
  size_t start = at + flag.size() + 1;
  size_t end = line.find(' ', start);
  return line.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST_F(LaunchTest, PrefixesEveryLineAndSucceeds) {
  // The chief (worker 0) ends the job once worker 1 has written everything; nobody tells the fake
  // servers that the job is complete, so they are stopped at the end of --finish_timeout.
  std::string trainer = Script("trainer.sh", absl::StrCat(kGetIndex, WaitForPs(2),
                                                          "echo hello\n"
                                                          "echo \"args: $*\"\n"
                                                          "echo \"to stderr $IDX\" >&2\n"
                                                          "echo \"pid $$\"\n"
                                                          "printf 'tail without newline'\n"
                                                          "touch \"",
                                                          dir_, "/worker_done_$IDX\"\n",
                                                          "if [ \"$IDX\" = 0 ]; then\n"
                                                          "  i=0; while [ ! -f \"",
                                                          dir_, "/worker_done_1\" ] && [ $i -lt 200 ]; do\n",
                                                          "    sleep 0.05; i=$((i+1))\n"
                                                          "  done\n"
                                                          "fi\n"));
  Result r = Launch({"launch", "--ps", "2", "--workers=2", "--timeout=60", "--finish_timeout=0.5", "--server_cmd",
                     "/bin/sh " + FakeServer(), trainer, "a", "b"});
  EXPECT_EQ(r.code, 0) << r.err << r.out;
  for (int w = 0; w < 2; ++w) {
    std::string p = absl::StrCat("[worker ", w, "] ");
    EXPECT_THAT(r.out, HasSubstr(p + "hello\n"));
    EXPECT_THAT(r.out, HasSubstr(absl::StrCat(p, "to stderr ", w, "\n")));
    EXPECT_THAT(r.out, HasSubstr(p + "tail without newline\n"));
    EXPECT_THAT(r.out, HasSubstr(absl::StrCat(p, "args: a b --ps_hosts=127.0.0.1:")));
    EXPECT_THAT(r.out, HasSubstr(absl::StrCat(" --job_name=worker --task_index=", w, "\n")));
  }
  for (int p = 0; p < 2; ++p) {
    EXPECT_THAT(r.out, HasSubstr(absl::StrCat("[ps ", p, "] serving --ps_hosts=127.0.0.1:")));
    EXPECT_THAT(r.out, HasSubstr(absl::StrCat(" --job_name=ps --task_index=", p, "\n")));
    EXPECT_THAT(r.out, HasSubstr(absl::StrCat("[ps ", p, "] ps ", p, " got TERM\n")));  // stopped by SIGTERM
  }
  for (const std::string& line : Lines(r.out)) {
    EXPECT_TRUE(absl::StartsWith(line, "[ps ") || absl::StartsWith(line, "[worker ")) << line;
  }
  EXPECT_THAT(r.err, HasSubstr("dflow launch: cluster ps: [127.0.0.1:"));
  EXPECT_THAT(r.err, HasSubstr("dflow launch: worker 0 (the chief) exited 0: the job is complete\n"));
  for (int p = 0; p < 2; ++p) {
    EXPECT_THAT(r.err, HasSubstr(absl::StrCat("dflow launch: ps ", p,
                                              " has not exited 0.5 s after the chief finished; stopping it\n")));
  }
  // The launcher names each task's pid as it starts it: the pid the task itself sees.
  for (const std::string name : {"ps 0", "ps 1", "worker 0", "worker 1"}) {
    std::string started = "dflow launch: started " + name + " (pid ";
    size_t at = r.err.find(started);
    ASSERT_NE(at, std::string::npos) << r.err;
    at += started.size();
    std::string pid = r.err.substr(at, r.err.find(')', at) - at);
    EXPECT_THAT(r.out, HasSubstr("[" + name + "] pid " + pid + "\n"));
  }

  // Every task sees the same cluster, with four different ports on 127.0.0.1.
  std::set<std::string> ps_hosts, worker_hosts;
  for (const std::string& line : Lines(r.out)) {
    if (line.find("--ps_hosts=") == std::string::npos) continue;
    ps_hosts.insert(FlagIn(line, "--ps_hosts"));
    worker_hosts.insert(FlagIn(line, "--worker_hosts"));
  }
  ASSERT_EQ(ps_hosts.size(), 1u);
  ASSERT_EQ(worker_hosts.size(), 1u);
  std::set<std::string> ports;
  for (const std::string& hosts : {*ps_hosts.begin(), *worker_hosts.begin()}) {
    for (absl::string_view host : absl::StrSplit(hosts, ',')) {
      ASSERT_TRUE(absl::StartsWith(host, "127.0.0.1:")) << host;
      ports.insert(std::string(host.substr(10)));
    }
  }
  EXPECT_EQ(ports.size(), 4u);
}

TEST_F(LaunchTest, LinesOfDifferentTasksNeverInterleave) {
  // Each line is written in three pieces while the other workers write theirs.
  std::string trainer = Script("trainer.sh", absl::StrCat(kGetIndex, "n=0\n"
                                                                     "while [ $n -lt 300 ]; do\n"
                                                                     "  printf 'w%s-%s-' \"$IDX\" \"$n\"\n"
                                                                     "  printf 'piece2-'\n"
                                                                     "  printf 'piece3\\n'\n"
                                                                     "  n=$((n+1))\n"
                                                                     "done\n"));
  Result r = Launch({"launch", "--workers", "3", "--timeout", "60", trainer});
  ASSERT_EQ(r.code, 0) << r.err;
  std::map<int, int> next;  // worker -> next line number expected
  for (const std::string& line : Lines(r.out)) {
    int w = -1, n = -1;
    std::vector<std::string> parts = absl::StrSplit(line, absl::MaxSplits(' ', 2));
    ASSERT_EQ(parts.size(), 3u) << line;
    ASSERT_EQ(parts[0], "[worker") << line;
    ASSERT_TRUE(absl::SimpleAtoi(absl::StripSuffix(parts[1], "]"), &w)) << line;
    std::vector<std::string> fields = absl::StrSplit(parts[2], '-');
    ASSERT_EQ(fields.size(), 4u) << line;
    EXPECT_EQ(fields[0], absl::StrCat("w", w)) << line;
    ASSERT_TRUE(absl::SimpleAtoi(fields[1], &n)) << line;
    EXPECT_EQ(n, next[w]) << line;
    next[w] = n + 1;
    EXPECT_EQ(fields[2], "piece2") << line;
    EXPECT_EQ(fields[3], "piece3") << line;
  }
  EXPECT_THAT(next, ElementsAre(std::pair(0, 300), std::pair(1, 300), std::pair(2, 300)));
}

// Shell lines that wait (at most 10 s) until the process whose pid is in FILE is gone: reaped by
// the launcher, which reports a task's end when it reaps it (a zombie still answers kill -0).
std::string WaitUntilReaped(const std::string& file) {
  return absl::StrCat("i=0; while [ ! -s \"", file, "\" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\n",
                      "p=$(cat \"", file, "\")\n",
                      "i=0; while kill -0 \"$p\" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\n");
}

TEST_F(LaunchTest, ANonChiefWorkerFailingDoesNotStopTheOthers) {
  // Worker 1 exits 3 and worker 2 is killed by SIGKILL while the chief runs; the chief then
  // completes the job (the fake server exits 0) and exits 0.
  std::string trainer = Script("trainer.sh",
                               absl::StrCat(kGetIndex, WaitForPs(1), "if [ \"$IDX\" = 1 ]; then echo $$ > \"", dir_,
                                            "/pid_1\"; echo failing; exit 3; fi\n",
                                            "if [ \"$IDX\" = 2 ]; then echo $$ > \"", dir_,
                                            "/pid_2\"; kill -KILL $$; fi\n", WaitUntilReaped(dir_ + "/pid_1"),
                                            WaitUntilReaped(dir_ + "/pid_2"), "echo chief done\n", CompleteJob()));
  Result r = Launch({"launch", "--ps", "1", "--workers", "3", "--timeout", "60", "--grace_period", "2", "--server_cmd",
                     FakeServer(), trainer});
  EXPECT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_THAT(r.err, HasSubstr("dflow launch: worker 1 exited with status 3; the other tasks go on\n"));
  EXPECT_THAT(r.err, HasSubstr("dflow launch: worker 2 was killed by signal 9 (Killed); the other tasks go on\n"));
  EXPECT_THAT(r.err, HasSubstr("dflow launch: worker 0 (the chief) exited 0: the job is complete\n"));
  EXPECT_LT(r.err.find("worker 2 was killed"), r.err.find("the job is complete")) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("stopping")));  // the ps task exited by itself
  EXPECT_THAT(r.out, HasSubstr("[worker 0] chief done\n"));
  EXPECT_THAT(r.out, HasSubstr("[ps 0] ps 0: the job is complete\n"));
  EXPECT_LT(r.seconds, 30);
}

TEST_F(LaunchTest, TheChiefFailingStopsEverything) {
  std::string trainer = Script("trainer.sh", absl::StrCat(kGetIndex, WaitForPs(1),
                                                          "if [ \"$IDX\" = 0 ]; then echo failing; exit 5; fi\n"
                                                          "sleep 60\n"));
  Result r = Launch({"launch", "--ps", "1", "--workers", "3", "--timeout", "60", "--grace_period", "2", "--server_cmd",
                     FakeServer(), trainer});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("dflow launch: worker 0 (the chief) failed: it exited with status 5; stopping all "
                               "tasks\n"));
  EXPECT_THAT(r.err, Not(HasSubstr("timed out")));
  EXPECT_THAT(r.out, HasSubstr("[worker 0] failing\n"));
  EXPECT_THAT(r.out, HasSubstr("[ps 0] ps 0 got TERM\n"));
  EXPECT_LT(r.seconds, 30);  // the sleeping workers were stopped, not waited for

  // A chief killed by a signal, alone.
  trainer = Script("killed.sh", "kill -KILL $$\n");
  r = Launch({"launch", "--workers", "1", "--timeout", "60", trainer});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("worker 0 (the chief) failed: it was killed by signal 9 (Killed); stopping all tasks"));
}

TEST_F(LaunchTest, TasksLeftAfterTheChiefsSuccessAreStoppedAfterTheBound) {
  // Nobody tells worker 1 or the ps that the job is complete: they are stopped --finish_timeout
  // after the chief's success, and the job still counts as complete.
  std::string trainer = Script("trainer.sh", absl::StrCat(kGetIndex, WaitForPs(1),
                                                          "if [ \"$IDX\" = 0 ]; then echo done; exit 0; fi\n"
                                                          "trap 'echo \"worker $IDX got TERM\"; exit 7' TERM\n"
                                                          "while :; do sleep 0.05; done\n"));
  Result r = Launch({"launch", "--ps", "1", "--workers", "2", "--timeout", "20", "--finish_timeout", "0.5",
                     "--grace_period", "2", "--server_cmd", FakeServer(), trainer});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("dflow launch: worker 0 (the chief) exited 0: the job is complete\n"));
  EXPECT_THAT(r.err, HasSubstr("dflow launch: worker 1 has not exited 0.5 s after the chief finished; stopping it\n"));
  EXPECT_THAT(r.err, HasSubstr("dflow launch: ps 0 has not exited 0.5 s after the chief finished; stopping it\n"));
  EXPECT_THAT(r.err, Not(HasSubstr("timed out")));
  EXPECT_THAT(r.out, HasSubstr("[worker 1] worker 1 got TERM\n"));
  EXPECT_THAT(r.out, HasSubstr("[ps 0] ps 0 got TERM\n"));
  EXPECT_GE(r.seconds, 0.5);
  EXPECT_LT(r.seconds, 15);
}

TEST_F(LaunchTest, FailFastWorkerFailureStopsTheOthers) {
  std::string trainer = Script("trainer.sh",
                               absl::StrCat(kGetIndex, "if [ \"$IDX\" = 1 ]; then echo failing; exit 3; fi\n"
                                                       "sleep 60\n"));
  Result r = Launch({"launch", "--ps", "1", "--workers", "3", "--timeout", "60", "--grace_period", "2", "--fail_fast",
                     "--server_cmd", FakeServer(), trainer});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("dflow launch: worker 1 failed: it exited with status 3; stopping all tasks"));
  EXPECT_THAT(r.err, Not(HasSubstr("timed out")));
  EXPECT_THAT(r.out, HasSubstr("[worker 1] failing\n"));
  EXPECT_LT(r.seconds, 30);  // the sleeping workers were stopped, not waited for
}

TEST_F(LaunchTest, FailFastAlsoCountsAWorkerFailingAfterTheChiefsSuccess) {
  // Worker 1 fails after the chief exited 0 (it waits until the launcher has reaped the chief).
  std::string trainer = Script("trainer.sh",
                               absl::StrCat(kGetIndex, "if [ \"$IDX\" = 0 ]; then echo $$ > \"", dir_,
                                            "/pid_0\"; exit 0; fi\n", WaitUntilReaped(dir_ + "/pid_0"), "exit 3\n"));
  Result r = Launch({"launch", "--workers", "2", "--timeout", "60", "--fail_fast", trainer});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("dflow launch: worker 0 (the chief) exited 0: the job is complete\n"));
  EXPECT_THAT(r.err, HasSubstr("dflow launch: worker 1 failed: it exited with status 3; stopping all tasks\n"));
  // Without --fail_fast the same failure is reported and the job's result stands.
  std::filesystem::remove(dir_ + "/pid_0");
  r = Launch({"launch", "--workers", "2", "--timeout", "60", trainer});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("dflow launch: worker 1 exited with status 3 after the job completed\n"));
}

TEST_F(LaunchTest, TimeoutStopsEverything) {
  std::string trainer = Script("trainer.sh", "echo started\nsleep 60\n");
  Result r = Launch({"launch", "--ps", "1", "--workers", "2", "--timeout", "0.5", "--grace_period", "2", "--server_cmd",
                     FakeServer(), trainer});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("timed out after 0.5 s; stopping all tasks"));
  EXPECT_LT(r.seconds, 30);
}

TEST_F(LaunchTest, PsThatIgnoresSigtermIsKilledAfterTheGracePeriod) {
  // Nobody tells this ps that the job is complete: it is stopped --finish_timeout after the chief's success.
  std::string ps = Script("stubborn_ps.sh", absl::StrCat(kGetIndex, "trap '' TERM\n", "touch \"", dir_,
                                                         "/ps_ready_$IDX\"\n", "while :; do sleep 0.05; done\n"));
  std::string trainer = Script("trainer.sh", absl::StrCat(WaitForPs(1), "echo done\n"));
  Result r = Launch({"launch", "--ps", "1", "--workers", "1", "--timeout", "60", "--grace_period", "0.3",
                     "--finish_timeout", "0", "--server_cmd", ps, trainer});
  EXPECT_EQ(r.code, 0) << r.err;  // the chief succeeded; how the ps ended does not count
  EXPECT_THAT(r.err, HasSubstr("ps 0 has not exited 0 s after the chief finished; stopping it"));
  EXPECT_THAT(r.err, HasSubstr("ps 0 did not stop within 0.3 s of SIGTERM; killing it"));
  EXPECT_THAT(r.out, HasSubstr("[worker 0] done\n"));
  EXPECT_LT(r.seconds, 30);
}

TEST_F(LaunchTest, PsExitingEarlyIsAFailure) {
  std::string ps = Script("short_ps.sh", "echo bye\nexit 4\n");
  std::string trainer = Script("trainer.sh", "sleep 60\n");
  Result r = Launch({"launch", "--ps", "1", "--workers", "1", "--timeout", "60", "--grace_period", "2", "--server_cmd",
                     ps, trainer});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("ps 0 exited with status 4 before the chief finished; stopping all tasks"));
  EXPECT_THAT(r.out, HasSubstr("[ps 0] bye\n"));
  EXPECT_LT(r.seconds, 30);
}

TEST_F(LaunchTest, PsExitingZeroAfterJobCompletionIsNotAFailure) {
  // A ps told that the job is complete exits 0 while the workers are finishing.
  std::string ps = Script("done_ps.sh", "echo job complete\nexit 0\n");
  std::string trainer = Script("trainer.sh", "sleep 0.5\necho finished\n");
  Result r = Launch({"launch", "--ps", "1", "--workers", "1", "--timeout", "60", "--grace_period", "2", "--server_cmd",
                     ps, trainer});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("[worker 0] finished\n"));
  EXPECT_THAT(r.err, Not(HasSubstr("before the chief finished")));
}

TEST_F(LaunchTest, TrainerThatCannotStart) {
  Result r = Launch({"launch", "--ps", "1", "--workers", "2", "--timeout", "60", "--grace_period", "2", "--server_cmd",
                     FakeServer(), dir_ + "/no_such_trainer"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot start worker 0: " + dir_ + "/no_such_trainer: No such file or directory"));
  EXPECT_LT(r.seconds, 30);
  std::string not_executable = Script("not_executable.sh", "echo hi\n");
  chmod(not_executable.c_str(), 0644);
  Result s = Launch({"launch", "--workers", "1", "--timeout", "60", not_executable});
  EXPECT_EQ(s.code, 1);
  EXPECT_THAT(s.err, HasSubstr("Permission denied"));
}

TEST_F(LaunchTest, BackgroundChildrenDoNotHangTheLauncher) {
  // The trainer exits 0 but leaves a child that holds its output pipe open.
  std::string trainer = Script("trainer.sh", "sleep 60 &\necho started\nexit 0\n");
  Result r = Launch({"launch", "--workers", "2", "--timeout", "60", "--grace_period", "2", trainer});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("[worker 1] started\n"));
  EXPECT_LT(r.seconds, 30);
}

TEST_F(LaunchTest, SigtermAndSigintToTheLauncherStopAllTasks) {
  struct sigaction before;
  sigaction(SIGTERM, nullptr, &before);
  // The trainer's parent is the launcher, that is this test process.
  std::string trainer = Script("trainer.sh", absl::StrCat(kGetIndex, "if [ \"$IDX\" = 0 ]; then kill -TERM $PPID; fi\n"
                                                                     "sleep 60\n"));
  Result r = Launch({"launch", "--ps", "1", "--workers", "2", "--timeout", "60", "--grace_period", "2", "--server_cmd",
                     FakeServer(), trainer});
  EXPECT_EQ(r.code, 128 + SIGTERM);
  EXPECT_THAT(r.err, HasSubstr("got SIGTERM; stopping all tasks"));
  EXPECT_LT(r.seconds, 30);
  struct sigaction after;
  sigaction(SIGTERM, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);  // the launcher restored the handler

  trainer = Script("trainer_int.sh", "kill -INT $PPID\nsleep 60\n");
  r = Launch({"launch", "--workers", "1", "--timeout", "60", "--grace_period", "2", trainer});
  EXPECT_EQ(r.code, 128 + SIGINT);
  EXPECT_THAT(r.err, HasSubstr("got SIGINT; stopping all tasks"));
  EXPECT_LT(r.seconds, 30);
}

TEST_F(LaunchTest, BasePort) {
  auto ports = PickFreePorts(1);
  ASSERT_TRUE(ports.ok()) << ports.status();
  int p = (*ports)[0];
  std::string trainer = Script("trainer.sh", "echo \"$*\"\n");
  Result r = Launch({"launch", "--workers", "1", "--timeout", "60", "--base_port", std::to_string(p), trainer});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("--ps_hosts= --worker_hosts=127.0.0.1:", p, " --job_name=worker")));

  // A port that is taken is reported before anything starts.
  int s = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(s, 1), 0);
  ASSERT_EQ(getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  int taken = ntohs(addr.sin_port);
  r = Launch({"launch", "--workers", "1", "--timeout", "60", "--base_port", std::to_string(taken), trainer});
  close(s);
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat("--base_port: port ", taken, " on 127.0.0.1 is not free")));
  EXPECT_EQ(r.out, "");
}

TEST_F(LaunchTest, PsTrainerRunsTheTrainerOnPsTasksToo) {
  // One program for every task, as in TensorFlow's guide: the ps branch waits until the chief
  // completes the job (here: a file), the chief trains and completes it.
  std::string trainer = Script("one_program.sh", absl::StrCat(kGetIndex,
                                                              "echo \"args: $*\"\n"
                                                              "case \"$*\" in *--job_name=ps*)\n"
                                                              "  while [ ! -f \"",
                                                              dir_, "/job_complete\" ]; do sleep 0.05; done\n",
                                                              "  echo \"ps $IDX: joined\"; exit 0;;\n"
                                                              "esac\n",
                                                              CompleteJob()));
  Result r = Launch({"launch", "--ps", "1", "--workers=1", "--timeout=60", "--ps_trainer", trainer, "x"});
  EXPECT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("[ps 0] args: x --ps_hosts=127.0.0.1:"));
  EXPECT_THAT(r.out, HasSubstr(" --job_name=ps --task_index=0\n"));
  EXPECT_THAT(r.out, HasSubstr("[ps 0] ps 0: joined\n"));
  EXPECT_THAT(r.out, HasSubstr("[worker 0] args: x --ps_hosts=127.0.0.1:"));
  EXPECT_THAT(r.err, Not(HasSubstr("has not exited")));
}

TEST(PickFreePortsTest, DistinctPorts) {
  auto ports = PickFreePorts(16);
  ASSERT_TRUE(ports.ok()) << ports.status();
  std::set<int> distinct(ports->begin(), ports->end());
  EXPECT_EQ(distinct.size(), 16u);
  for (int p : *ports) {
    EXPECT_GT(p, 0);
    EXPECT_LE(p, 65535);
  }
  EXPECT_TRUE(PickFreePorts(0)->empty());
}

TEST(LaunchArgsTest, Parses) {
  auto o = ParseLaunchArgs({"--ps", "2", "--workers=3", "--base_port", "4000", "--timeout=1.5", "train.py", "--ps", "9",
                            "--lr=0.1"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->num_ps, 2);
  EXPECT_EQ(o->num_workers, 3);
  EXPECT_EQ(o->base_port, 4000);
  EXPECT_EQ(o->timeout_s, 1.5);
  EXPECT_EQ(o->grace_period_s, 5);
  EXPECT_EQ(o->finish_timeout_s, 10);
  EXPECT_FALSE(o->fail_fast);
  EXPECT_TRUE(o->server_cmd.empty());
  EXPECT_THAT(o->trainer, ElementsAre("train.py", "--ps", "9", "--lr=0.1"));  // the trainer's own args
  o = ParseLaunchArgs({"--workers", "1", "--fail_fast", "--finish_timeout=0", "--server_cmd", "/bin/sh  fake.sh", "--",
                       "--odd-trainer", "x"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->num_ps, 0);
  EXPECT_TRUE(o->fail_fast);
  EXPECT_EQ(o->finish_timeout_s, 0);
  EXPECT_THAT(o->server_cmd, ElementsAre("/bin/sh", "fake.sh"));
  EXPECT_THAT(o->trainer, ElementsAre("--odd-trainer", "x"));
  EXPECT_FALSE(o->ps_trainer);
  o = ParseLaunchArgs({"--ps_trainer", "--workers", "1", "python3", "t.py"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->ps_trainer);
  EXPECT_THAT(o->trainer, ElementsAre("python3", "t.py"));
}

TEST(LaunchArgsTest, UsageErrors) {
  auto error = [](std::vector<std::string> args) {
    std::ostringstream out, err;
    int code = RunLaunchCommand(args, out, err);
    EXPECT_EQ(code, 2);
    EXPECT_THAT(err.str(), HasSubstr("usage: dflow launch"));
    return err.str();
  };
  EXPECT_THAT(error({}), HasSubstr("--workers is missing"));
  EXPECT_THAT(error({"--workers", "2"}), HasSubstr("TRAINER is missing"));
  EXPECT_THAT(error({"--workers", "2", "--"}), HasSubstr("TRAINER is missing"));
  EXPECT_THAT(error({"--workers=0", "t"}), HasSubstr("--workers takes an integer in 1..256, got '0'"));
  EXPECT_THAT(error({"--workers=2", "--ps=x", "t"}), HasSubstr("--ps takes an integer in 0..256, got 'x'"));
  EXPECT_THAT(error({"--workers=200", "--ps=100", "t"}), HasSubstr("more than 256"));
  EXPECT_THAT(error({"--workers=2", "--bogus", "t"}), HasSubstr("unknown flag '--bogus'"));
  EXPECT_THAT(error({"--workers=2", "--timeout"}), HasSubstr("--timeout needs a value"));
  EXPECT_THAT(error({"--workers=2", "--timeout=-1", "t"}), HasSubstr("--timeout takes a number of seconds > 0"));
  EXPECT_THAT(error({"--workers=2", "--timeout=0", "t"}), HasSubstr("--timeout takes a number of seconds > 0"));
  EXPECT_THAT(error({"--workers=2", "--timeout=nan", "t"}), HasSubstr("--timeout takes"));
  EXPECT_THAT(error({"--workers=2", "--grace_period=-1", "t"}), HasSubstr("--grace_period takes"));
  EXPECT_THAT(error({"--workers=2", "--base_port=0", "t"}), HasSubstr("--base_port takes an integer in 1..65535"));
  EXPECT_THAT(error({"--workers=2", "--base_port=65535", "t"}), HasSubstr("leaves no room for 2 ports"));
  EXPECT_THAT(error({"--workers=2", "--server_cmd=", "t"}), HasSubstr("--server_cmd is empty"));
  EXPECT_THAT(error({"--workers=2", "--finish_timeout=-1", "t"}), HasSubstr("--finish_timeout takes"));
  EXPECT_THAT(error({"--workers=2", "--fail_fast=1", "t"}), HasSubstr("--fail_fast takes no value"));
  EXPECT_THAT(error({"--workers=2", "--ps_trainer=1", "t"}), HasSubstr("--ps_trainer takes no value"));
}

TEST(LaunchArgsTest, IsADflowCommand) {
  std::ostringstream out, err;
  EXPECT_EQ(RunDflowCommand({"help"}, out, err), 0);
  EXPECT_THAT(out.str(), HasSubstr("launch --ps N --workers M"));
  EXPECT_EQ(RunDflowCommand({"launch", "--workers", "1"}, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("dflow launch: TRAINER is missing"));
  out.str("");
  EXPECT_EQ(RunDflowCommand({"launch", "--help"}, out, err), 0);
  EXPECT_THAT(out.str(), HasSubstr("usage: dflow launch"));
}

}  // namespace
}  // namespace dflow::tools
