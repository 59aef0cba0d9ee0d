#include "graph/graph_extension.h"

#include "graph/function_library.h"
#include "graph/graph_def.h"
#include "proto/graph.pb.h"

namespace dflow {

StatusOr<std::unique_ptr<Graph>> ExtendGraphDef(const proto::GraphDef& delta, proto::GraphDef* def) {
  auto g = std::make_unique<Graph>();
  if (def == nullptr) {
    RETURN_IF_ERROR(ImportGraphDef(delta, g.get()));
    return g;
  }
  def->mutable_node()->Reserve(def->node_size() + delta.node_size());
  for (const auto& n : delta.node()) *def->add_node() = n;
  for (const auto& f : delta.library().function()) *def->mutable_library()->add_function() = f;
  if (delta.has_versions()) *def->mutable_versions() = delta.versions();
  RETURN_IF_ERROR(ImportGraphDef(*def, g.get()));
  // Identical functions sent again collapse into one.
  g->library().ToProto(def->mutable_library());
  return g;
}

}  // namespace dflow
