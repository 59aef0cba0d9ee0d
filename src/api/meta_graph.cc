#include "dflow/meta_graph.h"

#include <google/protobuf/text_format.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/scope_internal.h"
#include "framework/op_def.h"
#include "base/env.h"
#include "framework/session.h"
#include "graph/graph_def.h"

namespace dflow::train {
namespace {

std::string Scoped(const std::string& scope, const std::string& name) {
  if (scope.empty() || name.empty()) return name;
  if (name[0] == '^') return absl::StrCat("^", scope, "/", name.substr(1));
  return absl::StrCat(scope, "/", name);
}

// The VariableDef of a VariableV2 node: TensorFlow's names "<v>:0", "<v>/Assign",
// "<v>/read:0", and the initializer's value input.
proto::VariableDef VariableDefOf(const Graph& g, const Node* var, bool trainable) {
  proto::VariableDef d;
  d.set_variable_name(absl::StrCat(var->name(), ":0"));
  d.set_trainable(trainable);
  if (const Node* assign = g.FindNode(var->name() + "/Assign"); assign != nullptr) {
    d.set_initializer_name(assign->name());
    for (const Edge* e : assign->data_inputs()) {
      if (e->dst_input == 1) d.set_initial_value_name(absl::StrCat(e->src->name(), ":", e->src_output));
    }
  }
  // TensorFlow's from_proto needs a snapshot; a variable read by no Identity (a global step)
  // names its own reference output.
  d.set_snapshot_name(g.FindNode(var->name() + "/read") != nullptr ? var->name() + "/read:0" : var->name() + ":0");
  return d;
}

void ArgToProto(const ArgDef& a, proto::OpDef::ArgDef* p) {
  p->set_name(a.name);
  if (a.type != DT_INVALID) p->set_type(static_cast<proto::DataType>(a.type));
  p->set_type_attr(a.type_attr);
  p->set_number_attr(a.number_attr);
  p->set_type_list_attr(a.type_list_attr);
  p->set_is_ref(a.is_ref);
}

void OpDefToProto(const OpDef& d, proto::OpDef* p) {
  p->set_name(d.name);
  for (const ArgDef& a : d.inputs) ArgToProto(a, p->add_input_arg());
  for (const ArgDef& a : d.outputs) ArgToProto(a, p->add_output_arg());
  for (const AttrDef& a : d.attrs) {
    proto::OpDef::AttrDef* pa = p->add_attr();
    pa->set_name(a.name);
    pa->set_type(a.type);
    if (a.default_value.has_value()) AttrValueToProto(*a.default_value, pa->mutable_default_value());
    if (a.minimum.has_value()) {
      pa->set_has_minimum(true);
      pa->set_minimum(*a.minimum);
    }
    for (DType t : a.allowed_types)
      pa->mutable_allowed_values()->mutable_list()->add_type(static_cast<proto::DataType>(t));
  }
  p->set_summary(d.summary);
  p->set_is_stateful(d.is_stateful);
}

}  // namespace

proto::OpList StrippedOpList(const proto::GraphDef& graph_def) {
  std::set<std::string> used;
  for (const auto& n : graph_def.node()) used.insert(n.op());
  for (const auto& f : graph_def.library().function()) {
    for (const auto& n : f.node_def()) used.insert(n.op());
  }
  for (const auto& f : graph_def.library().function()) used.erase(f.signature().name());
  proto::OpList list;
  for (const std::string& op : used) {  // sorted, as TensorFlow writes them
    if (const OpDef* d = OpRegistry::Global()->LookUp(op); d != nullptr) OpDefToProto(*d, list.add_op());
  }
  return list;
}

proto::SaverDef SaverDefOf(const Saver& saver) {
  proto::SaverDef d;
  if (!saver.valid()) return d;
  d.set_filename_tensor_name(saver.filename().name());
  d.set_save_tensor_name(saver.save_path().name());
  d.set_restore_op_name(saver.restore_op().name());
  d.set_max_to_keep(5);
  d.set_keep_checkpoint_every_n_hours(10000.0f);
  d.set_version(proto::SaverDef::V2);
  return d;
}

StatusOr<proto::MetaGraphDef> ExportMetaGraph(const Scope& scope, const Saver* saver,
                                              const ExportMetaGraphOptions& options) {
  RETURN_IF_ERROR(scope.status());
  proto::MetaGraphDef m;
  auto* info = m.mutable_meta_info_def();
  info->set_tensorflow_version("1.15.0+dflow");
  info->set_tensorflow_git_version("dflow");
  for (const std::string& t : options.tags) info->add_tags(t);
  const Graph& g = *scope.graph();
  ExportGraphDef(g, m.mutable_graph_def());
  *info->mutable_stripped_op_list() = StrippedOpList(m.graph_def());
  if (options.clear_devices) {
    for (auto& n : *m.mutable_graph_def()->mutable_node()) n.clear_device();
  }
  if (saver != nullptr && saver->valid()) *m.mutable_saver_def() = SaverDefOf(*saver);
  if (options.variable_collections) {
    const Scope::Collections* c = scope.collections();
    std::set<const Node*> trainable;
    for (const Output& o : c->trainable_variables) trainable.insert(o.node());
    auto add_vars = [&](const std::string& key, const std::vector<Output>& vars, bool only_trainable) {
      proto::CollectionDef cd;
      for (const Output& o : vars) {
        bool tr = trainable.count(o.node()) > 0;
        if (only_trainable && !tr) continue;
        cd.mutable_bytes_list()->add_value(VariableDefOf(g, o.node(), tr).SerializeAsString());
      }
      if (cd.bytes_list().value_size() > 0) (*m.mutable_collection_def())[key] = cd;
    };
    add_vars("variables", c->global_variables, false);
    add_vars("trainable_variables", c->global_variables, true);
    add_vars("local_variables", c->local_variables, false);
    if (!c->summaries.empty()) {
      proto::CollectionDef cd;
      for (const Output& o : c->summaries) cd.mutable_node_list()->add_value(o.name());
      (*m.mutable_collection_def())["summaries"] = cd;
    }
  }
  for (const auto& [key, names] : options.collections) {
    proto::CollectionDef cd;
    for (const std::string& n : names) cd.mutable_node_list()->add_value(n);
    (*m.mutable_collection_def())[key] = cd;
  }
  return m;
}

Status WriteMetaGraph(const proto::MetaGraphDef& meta_graph, const std::string& path, bool as_text) {
  std::string bytes;
  if (as_text) {
    if (!google::protobuf::TextFormat::PrintToString(meta_graph, &bytes)) {
      return errors::Internal("Cannot print the MetaGraphDef as text");
    }
  } else if (!meta_graph.SerializeToString(&bytes)) {
    return errors::Internal("Cannot serialize the MetaGraphDef (over 2 GiB?)");
  }
  RETURN_IF_ERROR(Env::Default()->CreateDirs(DirName(path)));
  return Env::Default()->WriteFileAtomic(path, bytes);
}

StatusOr<proto::MetaGraphDef> ReadMetaGraph(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, Env::Default()->ReadFile(path));
  proto::MetaGraphDef m;
  if (m.ParseFromString(bytes)) return m;
  m.Clear();
  if (google::protobuf::TextFormat::ParseFromString(bytes, &m)) return m;
  return errors::InvalidArgument("Could not parse ", bytes.size(), " bytes of ", path,
                                 " as a MetaGraphDef (binary or text format)");
}

StatusOr<ImportedMetaGraph> ImportMetaGraph(const proto::MetaGraphDef& meta_graph, bool clear_devices,
                                            const std::string& import_scope) {
  ImportedMetaGraph out;
  out.graph_def = meta_graph.graph_def();
  for (auto& n : *out.graph_def.mutable_node()) {
    if (clear_devices) n.clear_device();
    if (import_scope.empty()) continue;
    n.set_name(Scoped(import_scope, n.name()));
    for (auto& in : *n.mutable_input()) in = Scoped(import_scope, in);
  }
  for (const auto& [key, cd] : meta_graph.collection_def()) {
    std::vector<std::string>& items = out.collections[key];
    switch (cd.kind_case()) {
      case proto::CollectionDef::kNodeList:
        for (const auto& v : cd.node_list().value()) items.push_back(Scoped(import_scope, v));
        break;
      case proto::CollectionDef::kBytesList:
        for (const auto& v : cd.bytes_list().value()) {
          proto::VariableDef vd;
          if (absl::StrContains(key, "variables") && vd.ParseFromString(v) && !vd.variable_name().empty()) {
            items.push_back(Scoped(import_scope, vd.variable_name()));
          } else {
            items.push_back(v);
          }
        }
        break;
      case proto::CollectionDef::kInt64List:
        for (int64_t v : cd.int64_list().value()) items.push_back(absl::StrCat(v));
        break;
      case proto::CollectionDef::kFloatList:
        for (float v : cd.float_list().value()) items.push_back(absl::StrCat(v));
        break;
      default: break;
    }
  }
  if (meta_graph.has_saver_def() && !meta_graph.saver_def().restore_op_name().empty()) {
    out.has_saver = true;
    out.saver_def = meta_graph.saver_def();
    out.saver_def.set_filename_tensor_name(Scoped(import_scope, out.saver_def.filename_tensor_name()));
    out.saver_def.set_save_tensor_name(Scoped(import_scope, out.saver_def.save_tensor_name()));
    out.saver_def.set_restore_op_name(Scoped(import_scope, out.saver_def.restore_op_name()));
  }
  return out;
}

Status ImportedMetaGraph::RestoreFrom(Session* session, const std::string& checkpoint_prefix,
                                      bool create_session) const {
  if (create_session) RETURN_IF_ERROR(session->Create(graph_def));
  if (!has_saver) return errors::FailedPrecondition("The MetaGraphDef has no SaverDef to restore with");
  Tensor path(checkpoint_prefix);
  std::vector<Tensor> unused;
  return session->Run({{saver_def.filename_tensor_name(), path}}, {}, {saver_def.restore_op_name()}, &unused);
}

Status ImportedMetaGraph::SaveTo(Session* session, const std::string& path) const {
  if (!has_saver) return errors::FailedPrecondition("The MetaGraphDef has no SaverDef to save with");
  std::vector<Tensor> out;
  return session->Run({{saver_def.filename_tensor_name(), Tensor(path)}}, {saver_def.save_tensor_name()}, {}, &out);
}

}  // namespace dflow::train
