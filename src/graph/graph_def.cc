#include "graph/graph_def.h"

#include "graph/function_library.h"
#include "graph/topo_order.h"

#include <algorithm>
#include <climits>
#include <unordered_map>

#include "absl/strings/escaping.h"
#include "base/env.h"
#include "proto/attr_value.pb.h"
#include "proto/graph.pb.h"
#include "proto/tensor.pb.h"
#include "proto/tensor_shape.pb.h"
#include "tensor/tensor_proto.h"

namespace dflow {
namespace {

// The GraphDef version dflow writes (versions.producer): TensorFlow's at the time of the graphs
// dflow is tested against. Graphs that require a newer consumer (min_consumer) are refused.
constexpr int kGraphDefVersion = 1882;

// How many bytes all the tensors of one import (or one attr) may expand to beyond the bytes
// their protos carry: each tensor is bounded by kMaxProtoTensorBytes, and this bounds their sum,
// so a file of many small protos that each claim a huge filled tensor cannot exhaust memory.
constexpr int64_t kMaxExpansionBytes = kMaxProtoTensorBytes;

// The most tensors one input or output argument may have ("N * T" with N from an attr). Graph::AddNode
// sizes a node's outputs by N without a bound, so a hostile N must be refused before it is called.
constexpr int64_t kMaxArgLength = int64_t{1} << 20;

// What a TensorProto makes us allocate beyond its own size; 0 when its shape or dtype is bad
// (TensorFromProto rejects it then without allocating).
int64_t ExpansionBytes(const proto::TensorProto& p) {
  const int raw = static_cast<int>(p.dtype());
  if (!IsValidDType(raw) || raw == DT_RESOURCE || raw == DT_VARIANT) return 0;
  const DType dtype = static_cast<DType>(raw);
  auto shape = ShapeFromProto(p.tensor_shape());
  if (!shape.ok()) return 0;
  const int64_t elem = dtype == DT_STRING ? static_cast<int64_t>(sizeof(std::string)) : DTypeSize(dtype);
  const int64_t claimed = MultiplyWithoutOverflow(shape->num_elements(), elem);
  if (claimed < 0) return kMaxExpansionBytes + 1;
  const int64_t carried = static_cast<int64_t>(p.ByteSizeLong());
  return std::max<int64_t>(0, claimed - carried);
}

Status ChargeTensor(const proto::TensorProto& p, int64_t* budget) {
  const int64_t bytes = ExpansionBytes(p);
  if (bytes > *budget) {
    return errors::InvalidArgument("Tensor protos expand to more than ", kMaxExpansionBytes,
                                   " bytes beyond their own size");
  }
  *budget -= bytes;
  return absl::OkStatus();
}

StatusOr<DType> DTypeFromProto(int v) {
  if (IsValidDType(v)) return static_cast<DType>(v);
  if (v > kDTypeRefOffset && IsValidDType(v - kDTypeRefOffset)) return static_cast<DType>(v);
  std::string name = proto::DataType_IsValid(v) ? proto::DataType_Name(static_cast<proto::DataType>(v))
                                                : absl::StrCat("enum value ", v);
  return errors::InvalidArgument("Unsupported data type ", name);
}

// An empty list of the kind `declared_type` names ("list(int)" when it names no list kind).
AttrValue EmptyList(const std::string& declared_type) {
  if (declared_type == "list(string)") return AttrValue(std::vector<std::string>{});
  if (declared_type == "list(float)") return AttrValue(std::vector<float>{});
  if (declared_type == "list(bool)") return AttrValue(std::vector<bool>{});
  if (declared_type == "list(type)") return AttrValue(std::vector<DType>{});
  if (declared_type == "list(shape)") return AttrValue(std::vector<PartialTensorShape>{});
  if (declared_type == "list(tensor)") return AttrValue(std::vector<Tensor>{});
  return AttrValue(std::vector<int64_t>{});
}

Status ListFromProto(const proto::AttrValue::ListValue& l, const std::string& declared_type, int64_t* budget,
                     AttrValue* out) {
  int kinds = (l.s_size() > 0) + (l.i_size() > 0) + (l.f_size() > 0) + (l.b_size() > 0) + (l.type_size() > 0) +
              (l.shape_size() > 0) + (l.tensor_size() > 0) + (l.func_size() > 0);
  if (kinds > 1) return errors::InvalidArgument("Attr list holds values of more than one kind");
  if (kinds == 0) {
    *out = EmptyList(declared_type);
    return absl::OkStatus();
  }
  if (l.s_size() > 0) {
    *out = AttrValue(std::vector<std::string>(l.s().begin(), l.s().end()));
  } else if (l.i_size() > 0) {
    *out = AttrValue(std::vector<int64_t>(l.i().begin(), l.i().end()));
  } else if (l.f_size() > 0) {
    *out = AttrValue(std::vector<float>(l.f().begin(), l.f().end()));
  } else if (l.b_size() > 0) {
    *out = AttrValue(std::vector<bool>(l.b().begin(), l.b().end()));
  } else if (l.type_size() > 0) {
    std::vector<DType> types;
    types.reserve(l.type_size());
    for (int i = 0; i < l.type_size(); ++i) {
      auto t = DTypeFromProto(static_cast<int>(l.type(i)));
      if (!t.ok()) return errors::Annotate(t.status(), absl::StrCat("list(type) element ", i, ": "));
      types.push_back(*t);
    }
    *out = AttrValue(std::move(types));
  } else if (l.shape_size() > 0) {
    std::vector<PartialTensorShape> shapes;
    shapes.reserve(l.shape_size());
    for (int i = 0; i < l.shape_size(); ++i) {
      auto s = PartialShapeFromProto(l.shape(i));
      if (!s.ok()) return errors::Annotate(s.status(), absl::StrCat("list(shape) element ", i, ": "));
      shapes.push_back(*std::move(s));
    }
    *out = AttrValue(std::move(shapes));
  } else if (l.tensor_size() > 0) {
    // Charge every element before allocating any, so that a refused list allocates nothing.
    for (int i = 0; i < l.tensor_size(); ++i) {
      Status charged = ChargeTensor(l.tensor(i), budget);
      if (!charged.ok()) return errors::Annotate(charged, absl::StrCat("list(tensor) element ", i, ": "));
    }
    std::vector<Tensor> tensors;
    tensors.reserve(l.tensor_size());
    for (int i = 0; i < l.tensor_size(); ++i) {
      auto t = TensorFromProto(l.tensor(i));
      if (!t.ok()) return errors::Annotate(t.status(), absl::StrCat("list(tensor) element ", i, ": "));
      tensors.push_back(*std::move(t));
    }
    *out = AttrValue(std::move(tensors));
  } else {
    return errors::InvalidArgument("Function attrs (list(func)) are not supported");
  }
  return absl::OkStatus();
}

Status AttrValueFromProtoBudgeted(const proto::AttrValue& p, const std::string& declared_type, int64_t* budget,
                                  AttrValue* out) {
  switch (p.value_case()) {
    case proto::AttrValue::kS: *out = AttrValue(p.s()); return absl::OkStatus();
    case proto::AttrValue::kI: *out = AttrValue(static_cast<int64_t>(p.i())); return absl::OkStatus();
    case proto::AttrValue::kF: *out = AttrValue(p.f()); return absl::OkStatus();
    case proto::AttrValue::kB: *out = AttrValue(p.b()); return absl::OkStatus();
    case proto::AttrValue::kType: {
      ASSIGN_OR_RETURN(DType t, DTypeFromProto(static_cast<int>(p.type())));
      *out = AttrValue(t);
      return absl::OkStatus();
    }
    case proto::AttrValue::kShape: {
      ASSIGN_OR_RETURN(PartialTensorShape s, PartialShapeFromProto(p.shape()));
      *out = AttrValue(std::move(s));
      return absl::OkStatus();
    }
    case proto::AttrValue::kTensor: {
      RETURN_IF_ERROR(ChargeTensor(p.tensor(), budget));
      ASSIGN_OR_RETURN(Tensor t, TensorFromProto(p.tensor()));
      *out = AttrValue(std::move(t));
      return absl::OkStatus();
    }
    case proto::AttrValue::kList: return ListFromProto(p.list(), declared_type, budget, out);
    case proto::AttrValue::kFunc:
      if (p.func().attr_size() > 0) {
        return errors::InvalidArgument("Function attr '", p.func().name(),
                                       "' has attrs of its own: dflow's functions are monomorphic");
      }
      *out = AttrValue(NameAttrList{p.func().name()});
      return absl::OkStatus();
    case proto::AttrValue::kPlaceholder:
      return errors::InvalidArgument("Attr placeholders ('", p.placeholder(), "') are only valid in functions");
    case proto::AttrValue::VALUE_NOT_SET:
      // Left empty: Graph::AddNode reports it if the op declares the attr.
      *out = AttrValue();
      return absl::OkStatus();
  }
  return errors::InvalidArgument("Attr value of unknown kind ", static_cast<int>(p.value_case()));
}

// One NodeDef's inputs, resolved: an index into the GraphDef, or a node of the graph already.
struct InputRef {
  int def_index = -1;        // >= 0: the NodeDef at this index
  Node* existing = nullptr;  // else: a node already in the graph
  int index = 0;
  bool is_control = false;
  bool back_edge = false;  // NextIteration -> Merge: closes a loop, added last
};

}  // namespace

Status ParseGraphDef(absl::string_view bytes, proto::GraphDef* out) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return errors::InvalidArgument("GraphDef of ", bytes.size(), " bytes is larger than the 2 GiB protobuf limit");
  }
  if (!out->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return errors::InvalidArgument("Could not parse ", bytes.size(), " bytes as a GraphDef");
  }
  return absl::OkStatus();
}

Status ReadGraphDefFile(const std::string& path, proto::GraphDef* out) {
  ASSIGN_OR_RETURN(std::string bytes, Env::Default()->ReadFile(path, INT_MAX));
  return errors::Annotate(ParseGraphDef(bytes, out), absl::StrCat("Reading GraphDef file '", path, "': "));
}

Status AttrValueFromProto(const proto::AttrValue& p, const std::string& declared_type, AttrValue* out) {
  int64_t budget = kMaxExpansionBytes;
  return AttrValueFromProtoBudgeted(p, declared_type, &budget, out);
}

void AttrValueToProto(const AttrValue& v, proto::AttrValue* p) {
  p->Clear();
  std::visit(
      [p](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
        } else if constexpr (std::is_same_v<T, std::string>) {
          p->set_s(x);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          p->set_i(x);
        } else if constexpr (std::is_same_v<T, float>) {
          p->set_f(x);
        } else if constexpr (std::is_same_v<T, bool>) {
          p->set_b(x);
        } else if constexpr (std::is_same_v<T, DType>) {
          p->set_type(static_cast<proto::DataType>(x));
        } else if constexpr (std::is_same_v<T, PartialTensorShape>) {
          ShapeToProto(x, p->mutable_shape());
        } else if constexpr (std::is_same_v<T, Tensor>) {
          TensorToProto(x, p->mutable_tensor());
        } else if constexpr (std::is_same_v<T, NameAttrList>) {
          p->mutable_func()->set_name(x.name);
        } else {
          proto::AttrValue::ListValue* l = p->mutable_list();
          for (const auto& e : x) {
            using E = std::decay_t<decltype(e)>;
            if constexpr (std::is_same_v<E, std::string>) {
              l->add_s(e);
            } else if constexpr (std::is_same_v<E, int64_t>) {
              l->add_i(e);
            } else if constexpr (std::is_same_v<E, float>) {
              l->add_f(e);
            } else if constexpr (std::is_same_v<E, bool>) {
              l->add_b(e);
            } else if constexpr (std::is_same_v<E, DType>) {
              l->add_type(static_cast<proto::DataType>(e));
            } else if constexpr (std::is_same_v<E, PartialTensorShape>) {
              ShapeToProto(e, l->add_shape());
            } else {
              static_assert(std::is_same_v<E, Tensor>);
              TensorToProto(e, l->add_tensor());
            }
          }
        }
      },
      v.value());
}

namespace {

Status CheckVersions(const proto::GraphDef& def) {
  if (def.versions().min_consumer() > kGraphDefVersion) {
    return errors::InvalidArgument("GraphDef needs a consumer of version ", def.versions().min_consumer(),
                                   " or later; dflow reads version ", kGraphDefVersion);
  }
  for (int bad : def.versions().bad_consumers()) {
    if (bad == kGraphDefVersion) {
      return errors::InvalidArgument("GraphDef disallows consumer version ", kGraphDefVersion);
    }
  }
  return absl::OkStatus();
}

// Node name -> index in `def`, checking that every name is valid, unique and new to `graph`.
Status IndexNodeNames(const proto::GraphDef& def, const Graph& graph, std::unordered_map<std::string, int>* index_of) {
  const int n = def.node_size();
  index_of->reserve(n);
  for (int i = 0; i < n; ++i) {
    const std::string& name = def.node(i).name();
    const std::string& op = def.node(i).op();
    // As in Graph::AddNode: internal ops (_Arg, _Send, ...) may have names that start with '_'.
    const bool internal_name = !op.empty() && op[0] == '_' && name.size() > 1 && name[0] == '_' &&
                               IsValidNodeName(absl::string_view(name).substr(1));
    if (!internal_name && !IsValidNodeName(name)) {
      return errors::InvalidArgument("Node ", i, " of the GraphDef has an invalid name '", absl::CEscape(name),
                                     "' (op '", absl::CEscape(def.node(i).op()),
                                     "'): names match [A-Za-z0-9.][A-Za-z0-9_.\\-/]*");
    }
    if (!index_of->emplace(name, i).second) {
      return errors::InvalidArgument("Duplicate node name in GraphDef: '", name, "'");
    }
    if (graph.IsNameUsed(name)) {
      return errors::InvalidArgument("Node '", name, "' of the GraphDef already exists in the graph");
    }
  }
  return absl::OkStatus();
}

// The NodeDefs' inputs, resolved, and the dependencies among the NodeDefs they make.
struct ResolvedInputs {
  std::vector<std::vector<InputRef>> inputs;  // by NodeDef index
  std::vector<std::vector<int>> consumers;    // by NodeDef index: the NodeDefs that must come after it
  std::vector<int> pending;                   // by NodeDef index: its inputs among the NodeDefs
};

StatusOr<ResolvedInputs> ResolveInputs(const proto::GraphDef& def, const std::unordered_map<std::string, int>& index_of,
                                       const Graph& graph) {
  const int n = def.node_size();
  ResolvedInputs r;
  r.inputs.resize(n);
  r.consumers.resize(n);
  r.pending.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    const proto::NodeDef& nd = def.node(i);
    bool seen_control = false;
    r.inputs[i].reserve(nd.input_size());
    for (int k = 0; k < nd.input_size(); ++k) {
      const std::string& in = nd.input(k);
      absl::string_view src;
      InputRef ref;
      if (!ParseTensorName(in, &src, &ref.index, &ref.is_control)) {
        return errors::InvalidArgument("Node '", nd.name(), "' (op ", nd.op(), "): input ", k, " '", absl::CEscape(in),
                                       "' is not a valid tensor name (\"node\", \"node:1\" or \"^node\")");
      }
      if (ref.is_control) {
        seen_control = true;
      } else if (seen_control) {
        return errors::InvalidArgument("Node '", nd.name(), "' (op ", nd.op(), "): data input ", k, " '", in,
                                       "' comes after a control input; control inputs must come last");
      }
      auto it = index_of.find(std::string(src));
      if (it != index_of.end() && !ref.is_control && nd.op() == "Merge" &&
          def.node(it->second).op() == "NextIteration") {
        ref.def_index = it->second;
        ref.back_edge = true;  // not a dependency: the loop is closed after every node exists
      } else if (it != index_of.end()) {
        ref.def_index = it->second;
        r.consumers[it->second].push_back(i);
        ++r.pending[i];
      } else if (Node* existing = graph.FindNode(src)) {
        ref.existing = existing;
      } else {
        return errors::InvalidArgument("Node '", nd.name(), "' (op ", nd.op(), ") has input '", in,
                                       "', but there is no node named '", src, "'");
      }
      r.inputs[i].push_back(ref);
    }
  }
  return r;
}

// The NodeDef indices in topological order, smallest index first: a file already in order keeps
// its order. InvalidArgument naming the nodes of one cycle when there is no order.
StatusOr<std::vector<int>> NodeDefOrder(const proto::GraphDef& def, ResolvedInputs& r) {
  std::vector<int> order = topo_internal::KahnOrder(
      r.pending,
      [&](int i, const auto& visit) {
        for (int c : r.consumers[i]) visit(c);
      },
      TopoTieBreak::kLowestId);
  if (order.size() == r.pending.size()) return order;
  std::vector<int> cycle = topo_internal::FindCycle(r.pending, [&](int i, const auto& visit) {
    for (const InputRef& in : r.inputs[i])
      if (in.def_index >= 0 && !in.back_edge) visit(in.def_index);
  });
  std::vector<std::string> names;
  for (int i : cycle) names.push_back(def.node(i).name());
  const int unordered = static_cast<int>(r.pending.size() - order.size());
  return errors::InvalidArgument("GraphDef has a cycle: ", topo_internal::DescribeCycle(names, unordered));
}

// A loop back edge of the import, added once every node exists.
struct PendingBackEdge {
  int merge;
  int index;
  InputRef ref;
};

// Fills spec->inputs and spec->control_inputs for NodeDef `i` from the nodes added so far; a
// back edge gets a stand-in input (another input of its Merge) and is recorded in back_edges.
Status FillSpecInputs(const proto::NodeDef& nd, int i, const std::vector<InputRef>& inputs,
                      const std::vector<Node*>& added, NodeSpec* spec, std::vector<PendingBackEdge>* back_edges) {
  for (const InputRef& r : inputs) {
    Node* src = r.def_index >= 0 ? added[r.def_index] : r.existing;
    if (r.is_control) {
      spec->control_inputs.push_back(src);
    } else if (r.back_edge) {
      back_edges->push_back({i, static_cast<int>(spec->inputs.size()), r});
      spec->inputs.push_back(NodeOut{});  // a stand-in until the loop is closed
    } else {
      spec->inputs.push_back(NodeOut{src, r.index});
    }
  }
  for (NodeOut& in : spec->inputs) {
    if (in.node != nullptr) continue;
    for (const NodeOut& other : spec->inputs)
      if (other.node != nullptr) in = other;
    if (in.node == nullptr) {
      return errors::InvalidArgument("Merge '", nd.name(), "' has no input from outside its loop");
    }
  }
  return absl::OkStatus();
}

// Converts the NodeDef's attrs into spec->attrs, charging their tensors to `budget`, and
// refuses list lengths ("N * T") that Graph::AddNode could not size safely.
Status FillSpecAttrs(const proto::NodeDef& nd, const OpDef& op_def, int producer, int64_t* budget, NodeSpec* spec) {
  // Sorted, so that the first bad attr reported does not depend on the map's order.
  std::vector<const std::string*> names;
  names.reserve(nd.attr_size());
  for (const auto& kv : nd.attr()) names.push_back(&kv.first);
  std::sort(names.begin(), names.end(), [](const std::string* a, const std::string* b) { return *a < *b; });
  for (const std::string* name : names) {
    const AttrDef* ad = op_def.FindAttr(*name);
    AttrValue v;
    Status s = AttrValueFromProtoBudgeted(nd.attr().at(*name), ad ? ad->type : std::string(), budget, &v);
    if (!s.ok()) {
      return errors::Annotate(s, absl::StrCat("Node '", nd.name(), "' (op ", nd.op(), "), attr '", *name, "': "));
    }
    spec->attrs.emplace(*name, std::move(v));
  }
  // TensorFlow's rule for graphs written before version 22: a Placeholder's empty shape
  // attr meant "unknown shape", not "scalar".
  if (producer <= 21 && nd.op() == "Placeholder") {
    auto it = spec->attrs.find("shape");
    const PartialTensorShape* shape = it == spec->attrs.end() ? nullptr : it->second.get_if<PartialTensorShape>();
    if (shape != nullptr && shape->dims() == 0) it->second = AttrValue(PartialTensorShape());
  }
  for (const auto* args : {&op_def.inputs, &op_def.outputs}) {
    for (const ArgDef& a : *args) {
      if (a.number_attr.empty()) continue;
      auto it = spec->attrs.find(a.number_attr);
      const int64_t* count = it == spec->attrs.end() ? nullptr : it->second.get_if<int64_t>();
      if (count != nullptr && *count > kMaxArgLength) {
        return errors::InvalidArgument("Node '", nd.name(), "' (op ", nd.op(), "): attr '", a.number_attr, "' is ",
                                       *count, ", more than the ", kMaxArgLength, " tensors argument '", a.name,
                                       "' may have");
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

Status ImportGraphDef(const proto::GraphDef& def, Graph* graph) {
  RETURN_IF_ERROR(CheckVersions(def));
  RETURN_IF_ERROR(graph->library().AddLibrary(def.library()));
  // Names first, so that inputs may refer to nodes later in the file.
  std::unordered_map<std::string, int> index_of;
  RETURN_IF_ERROR(IndexNodeNames(def, *graph, &index_of));
  ASSIGN_OR_RETURN(ResolvedInputs resolved, ResolveInputs(def, index_of, *graph));
  ASSIGN_OR_RETURN(const std::vector<int> order, NodeDefOrder(def, resolved));

  std::vector<Node*> added(def.node_size(), nullptr);
  std::vector<PendingBackEdge> back_edges;
  int64_t budget = kMaxExpansionBytes;
  for (int i : order) {
    const proto::NodeDef& nd = def.node(i);
    auto op_def = OpRegistry::Global()->LookUpOrError(nd.op());
    if (!op_def.ok()) {
      return errors::Annotate(op_def.status(), absl::StrCat("Node '", nd.name(), "' (op ", nd.op(), "): "));
    }
    NodeSpec spec;
    spec.name = nd.name();
    spec.op = nd.op();
    spec.device = nd.device();
    RETURN_IF_ERROR(FillSpecInputs(nd, i, resolved.inputs[i], added, &spec, &back_edges));
    RETURN_IF_ERROR(FillSpecAttrs(nd, **op_def, def.versions().producer(), &budget, &spec));
    // AddNode's errors name the node and op already.
    ASSIGN_OR_RETURN(added[i], graph->AddNode(std::move(spec)));
  }
  for (const PendingBackEdge& b : back_edges) {
    Status s = graph->UpdateInput(added[b.merge], b.index, NodeOut{added[b.ref.def_index], b.ref.index});
    if (!s.ok()) return errors::Annotate(s, absl::StrCat("Closing the loop at '", def.node(b.merge).name(), "': "));
  }
  return absl::OkStatus();
}

void ExportGraphDef(const Graph& graph, proto::GraphDef* def, int first_node_id) {
  def->Clear();
  def->mutable_versions()->set_producer(kGraphDefVersion);
  // The whole library every time: it is small, and importers accept a function again when it
  // is identical.
  if (!graph.library().empty()) graph.library().ToProto(def->mutable_library());
  for (int id = std::max(0, first_node_id); id < graph.num_node_ids(); ++id) {
    const Node* n = graph.node(id);
    if (n == nullptr) continue;
    proto::NodeDef* nd = def->add_node();
    nd->set_name(n->name());
    nd->set_op(n->op());
    for (const Edge* e : n->data_inputs()) {
      if (e == nullptr) continue;
      if (e->src_output == 0) nd->add_input(e->src->name());
      else nd->add_input(absl::StrCat(e->src->name(), ":", e->src_output));
    }
    for (const Edge* e : n->control_inputs()) nd->add_input(absl::StrCat("^", e->src->name()));
    nd->set_device(n->requested_device());
    auto* attrs = nd->mutable_attr();
    for (const auto& [k, v] : n->attrs()) AttrValueToProto(v, &(*attrs)[k]);
  }
}

}  // namespace dflow
