#include "tools/server_cmd.h"

#include <pthread.h>
#include <signal.h>

#include <cstdlib>
#include <limits>
#include <type_traits>
#include <ostream>
#include <thread>

#include <sys/stat.h>

#include "base/env.h"
#include "dflow/flags.h"
#include "dflow/server.h"
#include "framework/credentials.h"
#include "framework/file_policy.h"

namespace dflow::tools {

namespace {

// The server's own flags (those after the cluster flags) into `options`.
Status ReadServerFlags(const std::vector<std::string>& args, ServerOptions* options, std::string* credentials_dir,
                       bool* insecure) {
  FlagSpec spec;
  spec.values = {"--startup_wait_ms", "--max_message_bytes",       "--step_memory_limit",
                 "--max_graph_bytes", "--max_graph_nodes",         "--max_sessions_per_client",
                 "--allowed_dirs",    "--session_idle_timeout_ms", "--credentials"};
  spec.switches = {"--insecure"};
  ASSIGN_OR_RETURN(ParsedFlags flags, ParsedFlags::Parse(args, spec));
  if (!flags.positional().empty()) return errors::InvalidArgument("unexpected argument '", flags.positional()[0], "'");
  auto int_flag = [&](const char* name, int64_t min, auto* out) -> Status {
    using T = std::remove_pointer_t<decltype(out)>;
    ASSIGN_OR_RETURN(int64_t v, flags.GetInt64(name, *out, min, std::numeric_limits<T>::max()));
    *out = static_cast<T>(v);
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(int_flag("--startup_wait_ms", 0, &options->startup_wait_ms));
  RETURN_IF_ERROR(int_flag("--max_message_bytes", 1024, &options->max_message_bytes));
  RETURN_IF_ERROR(int_flag("--step_memory_limit", -1, &options->step_memory_limit_bytes));
  RETURN_IF_ERROR(int_flag("--max_graph_bytes", 0, &options->max_graph_bytes));
  RETURN_IF_ERROR(int_flag("--max_graph_nodes", 0, &options->max_graph_nodes));
  RETURN_IF_ERROR(int_flag("--max_sessions_per_client", 0, &options->max_sessions_per_client));
  RETURN_IF_ERROR(int_flag("--session_idle_timeout_ms", 0, &options->session_idle_timeout_ms));
  if (flags.Has("--allowed_dirs")) {
    options->allowed_dirs = FilePolicy::ParseDirList(flags.GetString("--allowed_dirs"));
    if (options->allowed_dirs.empty()) return errors::InvalidArgument("--allowed_dirs names no directory");
  }
  *credentials_dir = flags.GetString("--credentials");
  if (flags.Has("--credentials") && credentials_dir->empty()) return errors::InvalidArgument("--credentials is empty");
  *insecure = flags.Has("--insecure");
  return absl::OkStatus();
}

}  // namespace

int RunServerCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const char* env = std::getenv("TF_CONFIG");
  std::vector<std::string> rest;
  StatusOr<TaskConfig> task = TaskConfigFromArgs(args, env == nullptr ? "" : env, &rest);
  if (!task.ok()) {
    err << "dflow server: " << task.status().message() << "\n"
        << "usage: dflow server --ps_hosts=H:P,... --worker_hosts=H:P,... --job_name=ps|worker --task_index=N "
           "[--startup_wait_ms=N] [--credentials=DIR | --insecure] [--allowed_dirs=D,...]\n"
           "       [--max_message_bytes=N] [--step_memory_limit=BYTES] [--max_graph_bytes=N] [--max_graph_nodes=N]\n"
           "       [--max_sessions_per_client=N] [--session_idle_timeout_ms=N]   (or TF_CONFIG)\n"
           "Ops run here read and write files only under --allowed_dirs (default: the working directory and\n"
           "$TMPDIR or /tmp).\n"
           "Credentials: --credentials DIR (made by `dflow credentials create`), else the directory in\n"
           "DFLOW_CREDENTIALS, else (a task on a loopback address) this user's own store; --insecure serves\n"
           "plaintext without authentication, on purpose.\n";
    return 2;
  }
  ServerOptions options;
  options.cluster = task->cluster;
  options.job_name = task->job_name;
  options.task_index = task->task_index;
  std::string credentials_dir;
  bool insecure = false;
  if (Status s = ReadServerFlags(rest, &options, &credentials_dir, &insecure); !s.ok()) {
    err << "dflow server: " << s.message() << "\n";
    return 2;
  }
  if (insecure && !credentials_dir.empty()) {
    err << "dflow server: --insecure and --credentials exclude each other\n";
    return 2;
  }
  if (insecure) options.credentials.insecure = true;
  if (!credentials_dir.empty()) {
    StatusOr<ClusterCredentials> creds = LoadCredentials(credentials_dir);
    if (!creds.ok()) {
      err << "dflow server: --credentials: " << creds.status().message() << "\n";
      return 2;
    }
    options.credentials = *std::move(creds);
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

int RunCredentialsCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  constexpr char kCredsUsage[] =
      "usage: dflow credentials create DIR [--hosts=H,...] [--mutual_tls | --no_tls]\n"
      "Writes fresh credentials for one cluster: DIR/chief (the chief's host only: it may end and reset\n"
      "the job) and DIR/member (every other task and client). Give each task its directory with\n"
      "--credentials DIR/... or DFLOW_CREDENTIALS. --hosts: names or addresses the certificate is valid\n"
      "for besides the name dflow.cluster that clients check (so any address works); --mutual_tls:\n"
      "servers also require the clients' certificates; --no_tls: secrets only, plaintext traffic (for\n"
      "networks nobody else can watch: the secret crosses them in the clear).\n";
  if (args.size() < 2 || args[0] != "create") {
    err << kCredsUsage;
    return 2;
  }
  const std::string dir = args[1];
  FlagSpec spec;
  spec.values = {"--hosts"};
  spec.switches = {"--mutual_tls", "--no_tls"};
  auto flags = ParsedFlags::Parse(std::vector<std::string>(args.begin() + 2, args.end()), spec);
  if (flags.ok() && !flags->positional().empty()) {
    flags = errors::InvalidArgument("unexpected argument '", flags->positional()[0], "'");
  }
  if (!flags.ok()) {
    err << "dflow credentials: " << flags.status().message() << "\n" << kCredsUsage;
    return 2;
  }
  const std::vector<std::string> hosts = flags->GetList("--hosts");
  const bool mutual = flags->Has("--mutual_tls"), no_tls = flags->Has("--no_tls");
  if (Env::Default()->FileExists(dir)) {
    err << "dflow credentials: " << dir << " exists; choose a new directory\n";
    return 1;
  }
  if (mutual && no_tls) {
    err << "dflow credentials: --mutual_tls and --no_tls exclude each other\n";
    return 2;
  }
  StatusOr<ClusterCredentials> creds = GenerateClusterCredentials(hosts, mutual);
  if (creds.ok() && no_tls) *creds = creds->WithoutTls();
  Status s = creds.status();
  if (s.ok()) s = WriteCredentials(*creds, JoinPath(dir, "chief"));
  if (s.ok()) s = WriteCredentials(creds->WithoutChief(), JoinPath(dir, "member"));
  if (s.ok() && ::chmod(dir.c_str(), 0700) != 0) s = errors::Internal("chmod ", dir);
  if (!s.ok()) {
    err << "dflow credentials: " << s.message() << "\n";
    return 1;
  }
  out << "dflow credentials: wrote " << JoinPath(dir, "chief") << " (the chief only) and " << JoinPath(dir, "member")
      << " (the other tasks and clients)" << std::endl;
  return 0;
}

}  // namespace dflow::tools
