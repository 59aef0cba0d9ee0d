#include "tools/server_cmd.h"

#include <pthread.h>
#include <signal.h>

#include <cstdlib>
#include <ostream>
#include <thread>

#include "absl/strings/numbers.h"
#include "dflow/server.h"

namespace dflow::tools {

int RunServerCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const char* env = std::getenv("TF_CONFIG");
  std::vector<std::string> rest;
  StatusOr<TaskConfig> task = TaskConfigFromArgs(args, env == nullptr ? "" : env, &rest);
  if (!task.ok()) {
    err << "dflow server: " << task.status().message() << "\n"
        << "usage: dflow server --ps_hosts=H:P,... --worker_hosts=H:P,... --job_name=ps|worker --task_index=N "
           "[--startup_wait_ms=N]   (or TF_CONFIG)\n";
    return 2;
  }
  ServerOptions options;
  options.cluster = task->cluster;
  options.job_name = task->job_name;
  options.task_index = task->task_index;
  for (const std::string& a : rest) {
    const std::string flag = "--startup_wait_ms=";
    if (a.rfind(flag, 0) == 0 && absl::SimpleAtoi(a.substr(flag.size()), &options.startup_wait_ms) &&
        options.startup_wait_ms >= 0) {
      continue;
    }
    err << "dflow server: unknown argument '" << a << "'\n";
    return 2;
  }
  // SIGTERM and SIGINT stop the server: blocked here (threads made later inherit the mask) and
  // taken by a thread that waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  StatusOr<std::unique_ptr<Server>> server = Server::Create(options);
  if (!server.ok()) {
    err << "dflow server: " << server.status().message() << "\n";
    return 1;
  }
  out << "dflow server: /job:" << task->job_name << "/replica:0/task:" << task->task_index << " serving on port "
      << (*server)->port() << std::endl;
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    (*server)->Stop();
  });
  (*server)->Join();
  // Join returns after a signal (the waiter has finished Stop by then or is about to) or when the
  // job is complete: then the waiter still waits, and a signal to it ends the wait.
  if ((*server)->job_complete()) pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  out << "dflow server: " << ((*server)->job_complete() ? "the job is complete; stopped" : "stopped") << std::endl;
  return 0;
}

}  // namespace dflow::tools
