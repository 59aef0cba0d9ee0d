// GraphDef bytes, as a client sends them to CreateSession/ExtendSession and as `dflow run` and
// `dflow inspect` read them: parse, import into a Graph (op lookup, attrs and their defaults,
// input dtypes, shape inference), then what a session does with an imported graph (the frame
// analysis of its loops, the step graph of every node), and export and re-import it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "graph/control_flow_info.h"
#include "graph/graph_def.h"
#include "graph/subgraph.h"
#include "ops/register_all.h"
#include "proto/graph.pb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dflow;
  static const bool registered = (RegisterAllOps(), fuzz::QuietProtobuf());
  (void)registered;
  proto::GraphDef def;
  if (!ParseGraphDef(absl::string_view(reinterpret_cast<const char*>(data), size), &def).ok()) return 0;
  Graph graph;
  Status imported = ImportGraphDef(def, &graph);
  fuzz::Note("import", imported);
  if (!imported.ok()) return 0;

  (void)BuildControlFlowInfo(graph);
  std::vector<std::string> targets;
  for (const Node* n : graph.nodes()) targets.push_back(n->name());
  (void)BuildStepGraph(graph, {}, {}, targets);

  // What import accepted, export must write in a form import accepts again.
  proto::GraphDef exported;
  ExportGraphDef(graph, &exported);
  Graph again;
  Status s = ImportGraphDef(exported, &again);
  if (!s.ok()) std::fprintf(stderr, "re-import failed: %s\n", s.ToString().c_str());
  FUZZ_CHECK(s.ok());
  FUZZ_CHECK(again.num_nodes() == graph.num_nodes());
  return 0;
}
