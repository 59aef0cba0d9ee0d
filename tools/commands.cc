#include "tools/commands.h"

#include <algorithm>
#include <climits>
#include <ostream>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "base/env.h"
#include "dflow/core.h"
#include "dflow/flags.h"
#include "framework/op_kernel.h"
#include "framework/session.h"
#include "graph/graph_def.h"
#include "graph/subgraph.h"
#include "proto/graph.pb.h"
#include "google/protobuf/text_format.h"
#include "tools/checkpoint_v1.h"
#include "tools/events_cmd.h"
#include "tools/feed_value.h"
#include "tools/file_kind.h"
#include "tools/inspect_checkpoint.h"
#include "tools/launch.h"
#include "tools/saved_model_cmd.h"
#include "tools/server_cmd.h"
#include "tools/tensor_output.h"

namespace dflow::tools {
namespace {

constexpr char kUsage[] =
    "usage: dflow <command> [args]\n"
    "commands:\n"
    "  ops                          list the registered ops with their signatures\n"
    "  inspect GRAPH.pb             list the nodes of a GraphDef (binary or text): op, inputs, device\n"
    "  events FILE                  print \"tag step value\" for every scalar of an event file\n"
    "  inspect CHECKPOINT           list the tensors of a checkpoint (a prefix, or a directory\n"
    "                               with a `checkpoint` file): dtype, shape, small values\n"
    "  inspect FILE                 say what any other file is (SavedModel, MetaGraph, V1\n"
    "                               checkpoint, event file, TFRecord file, .npy)\n"
    "  run GRAPH.pb [--feed NAME=VALUE]... [--target NODE]... --fetch NAME [--fetch NAME]...\n"
    "      [--out FILE.npy|FILE.npz]\n"
    "                               run a GraphDef; VALUE is a number, a nested list\n"
    "                               ([[1,2],[3,4]]) or @file.npy; each --target is a step of its\n"
    "                               own, in order, then the fetches are one more step; --out\n"
    "                               writes the fetches in full (one: .npy; several: .npz)\n"
    "  run SAVED_MODEL_DIR [--tag serve] [--signature serving_default] [--input KEY=VALUE]...\n"
    "      [--output KEY]...        run a SavedModel's signature by its input and output keys\n"
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

constexpr char kNotRecognized[] =
    "is not a file dflow recognizes: not a GraphDef (binary or text), checkpoint, SavedModel, MetaGraph, "
    "event file, TFRecord file or .npy file";

// A GraphDef file, binary or text. Other files TensorFlow writes are named in the error.
Status ReadGraph(const std::string& path, proto::GraphDef* def) {
  const FileIdentity id = IdentifyFile(path);
  if (id.kind == FileKind::kTextGraphDef) {
    ASSIGN_OR_RETURN(std::string text, Env::Default()->ReadFile(path, INT_MAX));
    if (!google::protobuf::TextFormat::ParseFromString(text, def)) {
      return errors::InvalidArgument(path, " looks like a text GraphDef but does not parse as one");
    }
    return absl::OkStatus();
  }
  if (id.kind != FileKind::kGraphDef) {
    return errors::InvalidArgument(path, " is ", id.what, ", not a GraphDef");
  }
  Status s = ReadGraphDefFile(path, def);
  if (absl::IsInvalidArgument(s)) return errors::InvalidArgument(path, " ", kNotRecognized);
  return s;
}

// Each file kind's way to read it, after the one-line identification.
std::string Hint(FileKind kind) {
  switch (kind) {
    case FileKind::kSavedModel: return " (tf.saved_model.loader.load reads it)";
    case FileKind::kMetaGraph: return " (tf.train.import_meta_graph reads it)";
    default: return "";
  }
}

int Inspect(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.size() != 1) {
    err << "usage: dflow inspect GRAPH.pb | CHECKPOINT | FILE\n";
    return 2;
  }
  const FileIdentity id = IdentifyFile(args[0]);
  switch (id.kind) {
    case FileKind::kCheckpoint: return InspectCheckpoint(args[0], out, err);
    case FileKind::kCheckpointState: return InspectCheckpoint(args[0], out, err, /*state_file=*/true);
    case FileKind::kCheckpointV1: return InspectCheckpointV1(args[0], out, err);
    case FileKind::kGraphDef:
    case FileKind::kTextGraphDef: break;
    case FileKind::kSavedModel:
      out << args[0] << ": " << id.what << Hint(id.kind) << "\n";
      return InspectSavedModel(args[0], out, err);
    case FileKind::kCompressed:
    case FileKind::kDirectory: err << "error: " << args[0] << " is " << id.what << "\n"; return 1;
    default: out << args[0] << ": " << id.what << Hint(id.kind) << "\n"; return 0;
  }
  proto::GraphDef def;
  if (Status s = ReadGraph(args[0], &def); !s.ok()) {
    err << "error: " << s << "\n";
    return 1;
  }
  Graph g;
  const Status imported = ImportGraphDef(def, &g);
  if (Status s = imported; !s.ok()) {
    // Still list the nodes (without their output types): a graph with ops dflow lacks is worth
    // reading.
    err << "note: " << args[0] << " cannot run in dflow: " << s << "\n";
    out << def.node_size() << " nodes\n";
  } else {
    out << g.num_nodes() << " nodes\n";
  }
  for (const auto& n : def.node()) {
    Node* node = imported.ok() ? g.FindNode(n.name()) : nullptr;
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
  if (IsSavedModelRun(args)) return RunSavedModel(args, out, err);
  FlagSpec spec;
  spec.values = {"--feed", "--fetch", "--target", "--out"};
  auto flags = ParsedFlags::Parse(args, spec);
  if (!flags.ok()) {
    err << "error: " << flags.status().message() << "\n" << kUsage;
    return 2;
  }
  auto feeds = flags->GetKeyValues("--feed");
  if (!feeds.ok()) {
    err << "error: " << feeds.status().message() << "\n";
    return 2;
  }
  const std::vector<std::string> fetches = flags->GetAll("--fetch"), targets = flags->GetAll("--target");
  const std::string out_path = flags->GetString("--out");
  const std::string path = flags->positional().empty() ? "" : flags->positional()[0];
  if (flags->positional().size() > 1) {
    err << "error: unexpected argument '" << flags->positional()[1] << "'\n";
    return 2;
  }
  if (path.empty() || (fetches.empty() && targets.empty())) {
    err << "usage: dflow run GRAPH.pb [--feed NAME=VALUE]... [--target NODE]... --fetch NAME... [--out FILE]\n";
    return 2;
  }
  const bool npz = absl::EndsWith(out_path, ".npz");
  if (!out_path.empty()) {
    if (!npz && !absl::EndsWith(out_path, ".npy")) {
      err << "error: --out takes FILE.npy (one fetch) or FILE.npz (any number), got '" << out_path << "'\n";
      return 2;
    }
    for (size_t i = 0; npz && i < fetches.size(); ++i) {
      if (std::find(fetches.begin(), fetches.begin() + i, fetches[i]) != fetches.begin() + i) {
        err << "error: --fetch " << fetches[i] << " is given twice; an .npz file holds each name once\n";
        return 2;
      }
    }
    if (!npz && fetches.size() != 1) {
      err << "error: --out " << out_path << " holds one array but there are " << fetches.size()
          << " fetches; name an .npz file to write them all\n";
      return 2;
    }
  }
  auto fail = [&](const Status& s) {
    err << "error: " << s << "\n";
    return 1;
  };
  proto::GraphDef def;
  if (Status s = ReadGraph(path, &def); !s.ok()) return fail(s);
  Graph g;
  if (Status s = ImportGraphDef(def, &g); !s.ok()) return fail(errors::Annotate(s, path + ": "));
  std::vector<std::pair<std::string, Tensor>> inputs;
  for (const auto& [name, text] : *feeds) {
    auto t = ResolveTensor(g, name);
    if (!t.ok()) return fail(t.status());
    auto value = ParseFeedValue(text, BaseType(t->node->output_type(t->index)));
    if (!value.ok()) return fail(errors::Annotate(value.status(), absl::StrCat("--feed ", name, ": ")));
    inputs.emplace_back(name, *value);
  }
  auto session = NewSession(SessionOptions());
  if (!session.ok()) return fail(session.status());
  if (Status s = (*session)->Create(def); !s.ok()) return fail(s);
  // Each target is a step of its own, in order (init, then train); the fetches are a last step.
  for (const std::string& target : targets) {
    std::vector<Tensor> none;
    if (Status s = (*session)->Run(inputs, {}, {target}, &none); !s.ok()) {
      return fail(errors::Annotate(s, absl::StrCat("--target ", target, ": ")));
    }
  }
  std::vector<Tensor> outputs;
  if (!fetches.empty()) {
    if (Status s = (*session)->Run(inputs, fetches, {}, &outputs); !s.ok()) return fail(s);
  }
  for (size_t i = 0; i < fetches.size(); ++i) out << fetches[i] << " = " << PrintableTensor(outputs[i]) << "\n";
  if (!out_path.empty()) {
    StatusOr<std::string> bytes;
    if (npz) {
      std::vector<std::pair<std::string, Tensor>> arrays;
      for (size_t i = 0; i < fetches.size(); ++i) arrays.emplace_back(fetches[i], outputs[i]);
      bytes = NpzBytes(arrays);
    } else {
      bytes = NpyBytes(outputs[0]);
    }
    if (!bytes.ok()) return fail(errors::Annotate(bytes.status(), absl::StrCat("--out ", out_path, ": ")));
    if (Status s = Env::Default()->WriteFileAtomic(out_path, *bytes); !s.ok()) return fail(s);
  }
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
