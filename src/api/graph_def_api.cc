// The public GraphDef functions (dflow/graph_def.h) over graph/graph_def.h.
#include "dflow/graph_def.h"

#include <climits>

#include "absl/strings/str_cat.h"
#include "base/env.h"
#include "dflow/core.h"
#include "framework/session.h"
#include "graph/graph.h"
#include "graph/graph_def.h"

namespace dflow {

StatusOr<proto::GraphDef> GraphDefFromBytes(absl::string_view bytes) {
  proto::GraphDef def;
  RETURN_IF_ERROR(ParseGraphDef(bytes, &def));
  return def;
}

StatusOr<proto::GraphDef> ReadGraphDef(const std::string& path) {
  proto::GraphDef def;
  RETURN_IF_ERROR(ReadGraphDefFile(path, &def));
  return def;
}

Status WriteGraphDef(const proto::GraphDef& def, const std::string& path) {
  std::string bytes;
  if (!def.SerializeToString(&bytes)) {
    return errors::InvalidArgument("Could not serialize the GraphDef for '", path, "' (larger than 2 GiB?)");
  }
  return errors::Annotate(Env::Default()->WriteFileAtomic(path, bytes),
                          absl::StrCat("Writing GraphDef file '", path, "': "));
}

Status ImportGraphDef(const Scope& scope, const proto::GraphDef& def) {
  Graph* graph = scope.graph();
  if (graph == nullptr) return errors::InvalidArgument("ImportGraphDef: the scope has no graph");
  return ImportGraphDef(def, graph);
}

StatusOr<proto::GraphDef> ExportGraphDef(const Scope& scope) {
  const Graph* graph = scope.graph();
  if (graph == nullptr) return errors::InvalidArgument("ExportGraphDef: the scope has no graph");
  RETURN_IF_ERROR(scope.status());
  proto::GraphDef def;
  ExportGraphDef(*graph, &def);
  return def;
}

StatusOr<std::unique_ptr<Session>> NewSessionFromGraphDef(const proto::GraphDef& def, const SessionOptions& options) {
  InitDflow();
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options));
  RETURN_IF_ERROR(session->Create(def));
  return session;
}

}  // namespace dflow
