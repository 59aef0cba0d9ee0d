// FunctionDefs, as they arrive in a GraphDef's library: a FunctionDefLibrary's bytes are added
// to a library (signature checks), then each function is converted to the graph that runs it
// and imported, as the function runtime does when a call is first run.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_util.h"
#include "graph/control_flow_info.h"
#include "graph/function_library.h"
#include "graph/graph_def.h"
#include "ops/register_all.h"
#include "proto/graph.pb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dflow;
  static const bool registered = (RegisterAllOps(), fuzz::QuietProtobuf());
  (void)registered;
  proto::FunctionDefLibrary library;
  if (!library.ParseFromArray(data, static_cast<int>(size))) return 0;
  FunctionLibraryDefinition lib;
  Status added = lib.AddLibrary(library);
  fuzz::Note("add library", added);
  if (!added.ok()) return 0;
  proto::FunctionDefLibrary written;
  lib.ToProto(&written);
  FunctionLibraryDefinition again;
  FUZZ_CHECK(again.AddLibrary(written).ok());

  for (const proto::FunctionDef& f : library.function()) {
    const proto::FunctionDef* fdef = lib.Find(f.signature().name());
    FUZZ_CHECK(fdef != nullptr);
    proto::GraphDef def;
    Status converted = FunctionDefToGraphDef(*fdef, &def);
    fuzz::Note("to GraphDef", converted);
    if (!converted.ok()) continue;
    Graph graph;
    graph.library() = lib;
    Status imported = ImportGraphDef(def, &graph);
    fuzz::Note("import", imported);
    if (!imported.ok()) continue;
    (void)BuildControlFlowInfo(graph);
  }
  return 0;
}
