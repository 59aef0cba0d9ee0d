// MetaGraphDef: a graph with the names of its saver's ops and its named collections
// (TensorFlow's meta_graph.proto) — the ".meta" file beside a checkpoint and the body of a
// SavedModel (dflow/saved_model.h).
//
//   train::Saver saver(root);
//   auto meta = train::ExportMetaGraph(root, &saver, {.collections = {{"train_op", {"train"}}}});
//   Status s = train::WriteMetaGraph(*meta, "/tmp/run/model.meta");
//   ...                                                  // elsewhere, with no graph-building code:
//   auto imported = train::ImportMetaGraph(*train::ReadMetaGraph("/tmp/run/model.meta"));
//   Status r = imported->RestoreFrom(session.get(), "/tmp/run/model-100");
//   std::vector<std::string> train_op = imported->collections["train_op"];
//
// Collections are written and read as TensorFlow's: names of ops and tensors (node_list),
// variables as serialized VariableDefs (bytes_list), numbers (int64_list, float_list).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dflow/saver.h"
#include "dflow/scope.h"
#include "dflow/status.h"
#include "proto/meta_graph.pb.h"

namespace dflow {
class Session;
struct RunOptions;
}  // namespace dflow

namespace dflow::train {

struct ExportMetaGraphOptions {
  // Collections of op or tensor names ("train_op" -> {"GradientDescent"}), as node_list.
  std::map<std::string, std::vector<std::string>> collections;
  // Write the variables the scope's graph made through the client API (Variable::Create,
  // optimizer slots, the global step) as VariableDefs in "variables" and "trainable_variables".
  bool variable_collections = true;
  // Drop every node's device.
  bool clear_devices = false;
  std::vector<std::string> tags;
};

// The MetaGraphDef of the scope's graph, with `saver`'s SaverDef when it is non-null and valid.
StatusOr<proto::MetaGraphDef> ExportMetaGraph(const Scope& scope, const Saver* saver,
                                              const ExportMetaGraphOptions& options = {});
// The OpDefs of the ops a graph uses (its nodes' and its functions'), sorted by name: a
// MetaGraphDef's meta_info_def.stripped_op_list, which ExportMetaGraph writes as TensorFlow does.
proto::OpList StrippedOpList(const proto::GraphDef& graph_def);
// The SaverDef of a Saver (the names of its filename tensor, save tensor and restore op).
proto::SaverDef SaverDefOf(const Saver& saver);

// Writes binary (or text format) atomically; reads binary, else text format. InvalidArgument when
// the bytes are neither.
Status WriteMetaGraph(const proto::MetaGraphDef& meta_graph, const std::string& path, bool as_text = false);
StatusOr<proto::MetaGraphDef> ReadMetaGraph(const std::string& path);

// What ImportMetaGraph gives back: the graph to create a session with, the collections by name
// (node_list: the names; bytes_list of VariableDefs: the variables' names, "w:0"; numbers as
// text), and the SaverDef to restore and save with.
struct ImportedMetaGraph {
  proto::GraphDef graph_def;
  std::map<std::string, std::vector<std::string>> collections;
  proto::SaverDef saver_def;
  bool has_saver = false;

  // Creates `session` with graph_def (when create_session) then runs the SaverDef's restore op
  // with its filename tensor fed `checkpoint_prefix`. FailedPrecondition without a SaverDef.
  Status RestoreFrom(Session* session, const std::string& checkpoint_prefix, bool create_session = true) const;
  // Runs the SaverDef's save op: writes checkpoint `path` of the session's variables.
  Status SaveTo(Session* session, const std::string& path) const;
};

// Reads the graph, collections and saver of `meta_graph`. With clear_devices, the nodes'
// devices are dropped; with import_scope, every name gets "import_scope/" in front.
StatusOr<ImportedMetaGraph> ImportMetaGraph(const proto::MetaGraphDef& meta_graph, bool clear_devices = false,
                                            const std::string& import_scope = "");

}  // namespace dflow::train
