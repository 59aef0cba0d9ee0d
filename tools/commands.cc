#include "tools/commands.h"

#include <ostream>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "dflow/core.h"
#include "framework/op_kernel.h"
#include "framework/session.h"
#include "graph/graph_def.h"
#include "graph/subgraph.h"
#include "proto/graph.pb.h"
#include "tools/events_cmd.h"
#include "tools/feed_value.h"
#include "tools/inspect_checkpoint.h"
#include "tools/launch.h"
#include "tools/server_cmd.h"

namespace dflow::tools {
namespace {

constexpr char kUsage[] =
    "usage: dflow <command> [args]\n"
    "commands:\n"
    "  ops                          list the registered ops with their signatures\n"
    "  inspect GRAPH.pb             list the nodes of a GraphDef: op, inputs, device\n"
    "  events FILE                  print \"tag step value\" for every scalar of an event file\n"
    "  inspect CHECKPOINT           list the tensors of a checkpoint (a prefix, or a directory\n"
    "                               with a `checkpoint` file): dtype, shape, small values\n"
    "  run GRAPH.pb [--feed NAME=VALUE]... --fetch NAME [--fetch NAME]... [--target NODE]...\n"
    "                               run a GraphDef; VALUE is a number, a nested list\n"
    "                               ([[1,2],[3,4]]) or @file.npy\n"
    "  server --ps_hosts=H:P,... --worker_hosts=H:P,... --job_name=ps|worker --task_index=N\n"
    "                               run one task of a cluster until SIGTERM or SIGINT\n"
    "                               (the task may also come from TF_CONFIG); --credentials DIR\n"
    "                               or --insecure (see docs/SECURITY.md)\n"
    "  credentials create DIR [--hosts=H,...] [--mutual_tls]\n"
    "                               write fresh cluster credentials: DIR/chief, DIR/member\n"
    "  launch --ps N --workers M [--base_port P] [--timeout SECONDS] [--fail_fast] [--] TRAINER [ARGS...]\n"
    "                               start N ps servers and M trainers on 127.0.0.1, each\n"
    "                               given --ps_hosts, --worker_hosts, --job_name, --task_index;\n"
    "                               output lines prefixed [ps 0], [worker 1]; exit 0 when\n"
    "                               the chief (worker 0) exits 0 (--help: the other options\n"
    "                               and rules)\n";

int Ops(std::ostream& out) {
  for (const OpDef* def : OpRegistry::Global()->ListOps()) {
    out << def->Signature() << "\n";
  }
  return 0;
}

int Inspect(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.size() != 1) {
    err << "usage: dflow inspect GRAPH.pb | CHECKPOINT\n";
    return 2;
  }
  if (LooksLikeCheckpoint(args[0])) return InspectCheckpoint(args[0], out, err);
  proto::GraphDef def;
  if (Status s = ReadGraphDefFile(args[0], &def); !s.ok()) {
    err << "error: " << s << "\n";
    return 1;
  }
  Graph g;
  if (Status s = ImportGraphDef(def, &g); !s.ok()) {
    err << "error: " << args[0] << ": " << s << "\n";
    return 1;
  }
  out << g.num_nodes() << " nodes\n";
  for (const auto& n : def.node()) {
    Node* node = g.FindNode(n.name());
    out << n.name() << "  " << n.op();
    std::vector<std::string> types;
    for (int i = 0; node != nullptr && i < node->num_outputs(); ++i) {
      types.push_back(absl::StrCat(PythonDTypeName(node->output_type(i)), node->output_shape(i).DebugString()));
    }
    if (!types.empty()) out << " -> " << absl::StrJoin(types, ", ");
    if (n.input_size() > 0) out << "  inputs: " << absl::StrJoin(n.input(), ", ");
    if (!n.device().empty()) out << "  device: " << n.device();
    out << "\n";
  }
  return 0;
}

int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::string path;
  std::vector<std::pair<std::string, std::string>> feeds;
  std::vector<std::string> fetches, targets;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value_of = [&](const std::string& flag, std::string* v) {
      if (a == flag) {
        if (i + 1 >= args.size()) return false;
        *v = args[++i];
        return true;
      }
      if (absl::StartsWith(a, flag + "=")) {
        *v = a.substr(flag.size() + 1);
        return true;
      }
      return false;
    };
    std::string v;
    if (value_of("--feed", &v)) {
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0) {
        err << "error: --feed takes NAME=VALUE, got '" << v << "'\n";
        return 2;
      }
      feeds.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (value_of("--fetch", &v)) {
      fetches.push_back(v);
    } else if (value_of("--target", &v)) {
      targets.push_back(v);
    } else if (!a.empty() && a[0] == '-') {
      err << "error: unknown flag '" << a << "'\n" << kUsage;
      return 2;
    } else if (path.empty()) {
      path = a;
    } else {
      err << "error: unexpected argument '" << a << "'\n";
      return 2;
    }
  }
  if (path.empty() || (fetches.empty() && targets.empty())) {
    err << "usage: dflow run GRAPH.pb [--feed NAME=VALUE]... --fetch NAME... [--target NODE]...\n";
    return 2;
  }
  auto fail = [&](const Status& s) {
    err << "error: " << s << "\n";
    return 1;
  };
  proto::GraphDef def;
  if (Status s = ReadGraphDefFile(path, &def); !s.ok()) return fail(s);
  Graph g;
  if (Status s = ImportGraphDef(def, &g); !s.ok()) return fail(errors::Annotate(s, path + ": "));
  std::vector<std::pair<std::string, Tensor>> inputs;
  for (const auto& [name, text] : feeds) {
    auto t = ResolveTensor(g, name);
    if (!t.ok()) return fail(t.status());
    auto value = ParseFeedValue(text, BaseType(t->node->output_type(t->index)));
    if (!value.ok()) return fail(errors::Annotate(value.status(), absl::StrCat("--feed ", name, ": ")));
    inputs.emplace_back(name, *value);
  }
  auto session = NewSession(SessionOptions());
  if (!session.ok()) return fail(session.status());
  if (Status s = (*session)->Create(def); !s.ok()) return fail(s);
  std::vector<Tensor> outputs;
  if (Status s = (*session)->Run(inputs, fetches, targets, &outputs); !s.ok()) return fail(s);
  for (size_t i = 0; i < fetches.size(); ++i) out << fetches[i] << " = " << outputs[i] << "\n";
  return 0;
}

}  // namespace

int RunDflowCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  InitDflow();
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    (args.empty() ? err : out) << kUsage;
    return args.empty() ? 2 : 0;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "ops") return Ops(out);
  if (args[0] == "inspect") return Inspect(rest, out, err);
  if (args[0] == "events") return RunEventsCommand(rest, out, err);
  if (args[0] == "run") return Run(rest, out, err);
  if (args[0] == "launch") return RunLaunchCommand(rest, out, err);
  if (args[0] == "server") return RunServerCommand(rest, out, err);
  if (args[0] == "credentials") return RunCredentialsCommand(rest, out, err);
  err << "error: unknown command '" << args[0] << "'\n" << kUsage;
  return 2;
}

}  // namespace dflow::tools
