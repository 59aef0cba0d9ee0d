#include "graph/graph.h"

#include <algorithm>
#include <atomic>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "framework/device_name.h"
#include "framework/shape_inference.h"
#include "graph/function_library.h"

namespace dflow {
namespace {

std::atomic<uint64_t> g_next_graph_id{1};

// The most tensors one list argument may hold: far above any real graph, low enough that a
// hostile attr cannot make AddNode allocate without bound.
constexpr int64_t kMaxArgTensors = int64_t{1} << 20;

bool IsNameStartChar(char c) { return absl::ascii_isalnum(c) || c == '.'; }
bool IsNameChar(char c) { return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '-' || c == '/'; }

// Does `v` hold a value of attr type `type`? Empty lists fit every list type.
bool AttrFitsType(const AttrValue& v, const std::string& type) {
  std::string have = v.TypeName();
  if (have == type) return true;
  return false;
}

// Turns a value into the declared list type when it is an empty list of another kind.
bool CoerceEmptyList(AttrValue* v, const std::string& type) {
  bool empty = std::visit(
      [](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::vector<std::string>> || std::is_same_v<T, std::vector<int64_t>> ||
                      std::is_same_v<T, std::vector<float>> || std::is_same_v<T, std::vector<bool>> ||
                      std::is_same_v<T, std::vector<DType>> || std::is_same_v<T, std::vector<PartialTensorShape>> ||
                      std::is_same_v<T, std::vector<Tensor>>) {
          return x.empty();
        } else {
          return false;
        }
      },
      v->value());
  if (!empty) return false;
  if (type == "list(string)") *v = std::vector<std::string>{};
  else if (type == "list(int)") *v = std::vector<int64_t>{};
  else if (type == "list(float)") *v = std::vector<float>{};
  else if (type == "list(bool)") *v = std::vector<bool>{};
  else if (type == "list(type)") *v = std::vector<DType>{};
  else if (type == "list(shape)") *v = std::vector<PartialTensorShape>{};
  else if (type == "list(tensor)") *v = std::vector<Tensor>{};
  else return false;
  return true;
}

int64_t ListLength(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> int64_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::vector<std::string>> || std::is_same_v<T, std::vector<int64_t>> ||
                      std::is_same_v<T, std::vector<float>> || std::is_same_v<T, std::vector<bool>> ||
                      std::is_same_v<T, std::vector<DType>> || std::is_same_v<T, std::vector<PartialTensorShape>> ||
                      std::is_same_v<T, std::vector<Tensor>>) {
          return static_cast<int64_t>(x.size());
        } else {
          return -1;
        }
      },
      v.value());
}

}  // namespace

void Node::set_assigned_device(std::string d) { props_->assigned_device = std::move(d); }

bool ParseTensorName(absl::string_view name, absl::string_view* node, int* index, bool* is_control) {
  *is_control = false;
  *index = 0;
  if (!name.empty() && name[0] == '^') {
    *is_control = true;
    name.remove_prefix(1);
  }
  size_t colon = name.rfind(':');
  if (colon != absl::string_view::npos && !*is_control) {
    int i;
    if (!absl::SimpleAtoi(name.substr(colon + 1), &i) || i < 0) return false;
    *index = i;
    name = name.substr(0, colon);
  }
  *node = name;
  // Internal nodes (_Arg, _Send, ...) may have names that start with '_'.
  return IsValidNodeName(name) || (name.size() > 1 && name[0] == '_' && IsValidNodeName(name.substr(1)));
}

bool IsValidNodeName(absl::string_view name) {
  if (name.empty() || !IsNameStartChar(name[0])) return false;
  for (char c : name)
    if (!IsNameChar(c)) return false;
  return true;
}

Graph::Graph() : id_(g_next_graph_id.fetch_add(1)), library_(std::make_unique<FunctionLibraryDefinition>()) {}

Graph::~Graph() {
  for (auto& fn : on_destroy_) fn();
}

Node* Graph::FindNode(absl::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(num_nodes_);
  for (const auto& n : nodes_)
    if (n) out.push_back(n.get());
  return out;
}

bool Graph::IsNameUsed(absl::string_view name) const { return by_name_.count(std::string(name)) > 0; }

std::string Graph::UniqueName(absl::string_view base) {
  std::string b(base);
  if (!case_insensitive_names_) {
    int& counter = name_counters_[b];
    if (counter == 0 && !IsNameUsed(b)) {
      counter = 1;
      return b;
    }
    for (;;) {
      if (counter == 0) counter = 1;
      std::string candidate = absl::StrCat(b, "_", counter++);
      if (!IsNameUsed(candidate)) return candidate;
    }
  }
  // TensorFlow's Python rule: names differing only in case collide, and every name handed out
  // is marked used ("add_1" given, a later "add_1" becomes "add_1_1").
  auto taken = [&](const std::string& c) {
    if (IsNameUsed(c)) return true;
    auto it = name_counters_.find(absl::AsciiStrToLower(c));
    return it != name_counters_.end() && it->second > 0;
  };
  std::string key = absl::AsciiStrToLower(b);
  int& counter = name_counters_[key];
  if (counter == 0 && !taken(b)) {
    counter = 1;
    return b;
  }
  for (;;) {
    if (counter == 0) counter = 1;
    std::string candidate = absl::StrCat(b, "_", counter++);
    if (!taken(candidate)) {
      int& c = name_counters_[absl::AsciiStrToLower(candidate)];
      if (c == 0) c = 1;
      return candidate;
    }
  }
}

const Edge* Graph::NewEdge(Node* src, int src_output, Node* dst, int dst_input) {
  edges_.push_back(std::make_unique<Edge>(Edge{src, src_output, dst, dst_input}));
  const Edge* e = edges_.back().get();
  src->out_edges_.push_back(e);
  if (dst_input == kControlSlot) dst->control_inputs_.push_back(e);
  else dst->data_inputs_[dst_input] = e;
  return e;
}

Status Graph::AddControlEdge(Node* src, Node* dst) {
  if (src == nullptr || dst == nullptr) return errors::InvalidArgument("Control edge with a null node");
  if (src->graph() != this || dst->graph() != this) {
    return errors::InvalidArgument("Control edge from '", src->name(), "' to '", dst->name(),
                                   "' joins nodes of different graphs");
  }
  for (const Edge* e : dst->control_inputs_)
    if (e->src == src) return absl::OkStatus();
  NewEdge(src, kControlSlot, dst, kControlSlot);
  return absl::OkStatus();
}

Status Graph::UpdateInput(Node* dst, int index, NodeOut src) {
  if (dst == nullptr || src.node == nullptr || dst->graph() != this || src.node->graph() != this) {
    return errors::InvalidArgument("UpdateInput needs two nodes of this graph");
  }
  if (index < 0 || index >= dst->num_inputs()) {
    return errors::InvalidArgument("Node '", dst->name(), "' has no input ", index);
  }
  if (src.index < 0 || src.index >= src.node->num_outputs()) {
    return errors::InvalidArgument("Node '", src.node->name(), "' has no output ", src.index);
  }
  if (BaseType(src.node->output_type(src.index)) != BaseType(dst->input_type(index)) ||
      (IsRefType(dst->input_type(index)) && !IsRefType(src.node->output_type(src.index)))) {
    return errors::InvalidArgument("Input ", index, " of '", dst->name(), "' takes ",
                                   DTypeString(dst->input_type(index)), ", not ",
                                   DTypeString(src.node->output_type(src.index)), " from '", src.node->name(), "'");
  }
  const Edge* old = dst->data_inputs_[index];
  if (old != nullptr) {
    auto& outs = old->src->out_edges_;
    outs.erase(std::find(outs.begin(), outs.end(), old));
  }
  dst->data_inputs_[index] = nullptr;
  NewEdge(src.node, src.index, dst, index);
  return absl::OkStatus();
}

Status Graph::RemoveNode(Node* n) {
  if (n == nullptr || n->graph() != this || nodes_[n->id()].get() != n) {
    return errors::InvalidArgument("RemoveNode needs a node of this graph");
  }
  auto erase = [](std::vector<const Edge*>& v, const Edge* e) {
    auto it = std::find(v.begin(), v.end(), e);
    if (it != v.end()) v.erase(it);
  };
  for (const Edge* e : n->data_inputs_)
    if (e != nullptr) erase(e->src->out_edges_, e);
  for (const Edge* e : n->control_inputs_) erase(e->src->out_edges_, e);
  for (const Edge* e : n->out_edges_) {
    if (e->IsControlEdge()) erase(e->dst->control_inputs_, e);
    else e->dst->data_inputs_[e->dst_input] = nullptr;
  }
  by_name_.erase(n->name());
  --num_nodes_;
  nodes_[n->id()].reset();  // the edges stay allocated (and unreferenced) until the graph goes
  return absl::OkStatus();
}

namespace {

// Unknown attrs are errors, except internal ones ("_class", ...), which are kept as given.
Status CheckAttrNames(const OpDef& def, const AttrMap& attrs) {
  for (const auto& [k, v] : attrs) {
    if (!k.empty() && k[0] == '_') continue;
    if (def.FindAttr(k) == nullptr) {
      return errors::InvalidArgument("Attr '", k, "' is not an attr of op ", def.name);
    }
  }
  return absl::OkStatus();
}

// How the given inputs divide among the op's input args: with one variable-length arg, its
// length follows from the number of inputs given.
struct InputCounts {
  int given = 0;          // inputs given
  int fixed = 0;          // args of one tensor
  int variable_args = 0;  // args of N tensors or of a type list
};

// How many tensors input arg `a` takes (the inputs from index `next` on are its), setting its
// type-list attr from the inputs where it can be inferred.
Status InputArgLength(const ArgDef& a, const InputCounts& c, const std::vector<NodeOut>& inputs, size_t next,
                      AttrMap& attrs, int64_t* count) {
  *count = 1;
  if (!a.number_attr.empty()) {
    auto it = attrs.find(a.number_attr);
    if (it == attrs.end() || it->second.get_if<int64_t>() == nullptr) {
      return errors::InvalidArgument("Cannot tell how many tensors input '", a.name, "' takes (attr '", a.number_attr,
                                     "' missing)");
    }
    *count = *it->second.get_if<int64_t>();
    if (*count < 0 || *count > kMaxArgTensors) {
      return errors::InvalidArgument("Attr '", a.number_attr, "' = ", *count, " is out of range [0, ", kMaxArgTensors,
                                     "]");
    }
  } else if (!a.type_list_attr.empty()) {
    auto it = attrs.find(a.type_list_attr);
    if (it != attrs.end() && it->second.get_if<std::vector<DType>>()) {
      *count = static_cast<int64_t>(it->second.get_if<std::vector<DType>>()->size());
    } else if (c.variable_args == 1) {
      *count = c.given - c.fixed;
      std::vector<DType> types;
      for (int64_t i = 0; i < *count && next + i < inputs.size(); ++i) {
        const NodeOut& in = inputs[next + i];
        if (in.node == nullptr) return errors::InvalidArgument("Input ", next + i, " is null");
        types.push_back(BaseType(in.node->output_type(in.index)));
      }
      attrs[a.type_list_attr] = AttrValue(types);
    } else {
      return errors::InvalidArgument("Cannot tell the types of input '", a.name, "' (attr '", a.type_list_attr,
                                     "' missing)");
    }
  }
  return absl::OkStatus();
}

// The type input `next` (the i-th tensor of arg `a`) must have, checked against what it is;
// a type attr not given is inferred from it.
StatusOr<DType> InputType(const Graph* graph, const OpDef& def, const ArgDef& a, int64_t i, size_t next,
                          const NodeOut& in, AttrMap& attrs) {
  if (in.node == nullptr) return errors::InvalidArgument("Input ", next, " ('", a.name, "') is null");
  if (in.node->graph() != graph) {
    return errors::InvalidArgument("Input ", next, " ('", a.name, "') is node '", in.node->name(),
                                   "' of another graph");
  }
  if (in.index < 0 || in.index >= in.node->num_outputs()) {
    return errors::InvalidArgument("Input ", next, " ('", a.name, "') names output ", in.index, " of node '",
                                   in.node->name(), "', which has ", in.node->num_outputs(), " outputs");
  }
  DType have = in.node->output_type(in.index);
  DType want;
  if (a.type != DT_INVALID) {
    want = a.type;
  } else if (!a.type_attr.empty()) {
    auto it = attrs.find(a.type_attr);
    if (it == attrs.end()) {
      attrs[a.type_attr] = AttrValue(BaseType(have));
      it = attrs.find(a.type_attr);
    }
    const DType* t = it->second.get_if<DType>();
    if (t == nullptr) return errors::InvalidArgument("Attr '", a.type_attr, "' is not a type");
    want = *t;
  } else {
    want = (*attrs[a.type_list_attr].get_if<std::vector<DType>>())[i];
  }
  if (a.is_ref) {
    if (!IsRefType(have)) {
      return errors::InvalidArgument("Input '", a.name, "' needs a reference to a variable (",
                                     DTypeString(MakeRefType(want)), ") but '", in.node->name(), ":", in.index,
                                     "' is a ", DTypeString(have), " value");
    }
    want = MakeRefType(want);
  }
  if (BaseType(have) != BaseType(want)) {
    return errors::InvalidArgument("Input '", a.name, "' has type ", DTypeString(BaseType(have)), " (from '",
                                   in.node->name(), ":", in.index, "') that does not match type ",
                                   DTypeString(BaseType(want)), " expected by op ", def.name);
  }
  return want;
}

// Walks the input args, inferring type attrs from the inputs and checking dtypes.
Status FillInputTypes(const Graph* graph, const OpDef& def, const std::vector<NodeOut>& inputs, AttrMap& attrs,
                      std::vector<DType>* input_types) {
  InputCounts c;
  c.given = static_cast<int>(inputs.size());
  for (const ArgDef& a : def.inputs) {
    if (a.number_attr.empty() && a.type_list_attr.empty()) ++c.fixed;
    else ++c.variable_args;
  }
  for (const ArgDef& a : def.inputs) {
    if (!a.number_attr.empty() && !attrs.count(a.number_attr) && c.variable_args == 1) {
      attrs[a.number_attr] = AttrValue(int64_t{c.given - c.fixed});
    }
  }
  size_t next = 0;
  for (const ArgDef& a : def.inputs) {
    int64_t count;
    RETURN_IF_ERROR(InputArgLength(a, c, inputs, next, attrs, &count));
    if (next + count > inputs.size()) {
      return errors::InvalidArgument("Op ", def.name, " expects more inputs than the ", inputs.size(),
                                     " given (input '", a.name, "' is missing)");
    }
    for (int64_t i = 0; i < count; ++i, ++next) {
      ASSIGN_OR_RETURN(DType want, InputType(graph, def, a, i, next, inputs[next], attrs));
      input_types->push_back(want);
    }
  }
  if (next != inputs.size()) {
    return errors::InvalidArgument("Op ", def.name, " takes ", next, " inputs but ", inputs.size(), " were given");
  }
  return absl::OkStatus();
}

// Checks attr value `v` against its declaration: kind, allowed types, minimum.
Status CheckAttrValue(const AttrDef& ad, AttrValue& v) {
  if (ad.type == "int" && v.get_if<int64_t>() == nullptr) {
    return errors::InvalidArgument("Attr '", ad.name, "' must be an int, not ", v.TypeName());
  }
  if (!AttrFitsType(v, ad.type) && !CoerceEmptyList(&v, ad.type)) {
    return errors::InvalidArgument("Attr '", ad.name, "' must be of type ", ad.type, ", not ",
                                   v.empty() ? "empty" : v.TypeName());
  }
  if (!ad.allowed_types.empty()) {
    std::vector<DType> check;
    if (const DType* t = v.get_if<DType>()) check.push_back(*t);
    if (const auto* ts = v.get_if<std::vector<DType>>()) check = *ts;
    for (DType t : check) {
      if (std::find(ad.allowed_types.begin(), ad.allowed_types.end(), t) == ad.allowed_types.end()) {
        return errors::InvalidArgument("Value for attr '", ad.name, "' of ", DTypeString(t),
                                       " is not in the list of allowed values: ",
                                       absl::StrJoin(ad.allowed_types, ", ",
                                                     [](std::string* o, DType d) { o->append(DTypeString(d)); }));
      }
    }
  }
  if (ad.minimum) {
    int64_t n = ad.type == "int" ? *v.get_if<int64_t>() : ListLength(v);
    if (n < *ad.minimum) {
      return errors::InvalidArgument("Attr '", ad.name, "' is ", n, ", less than the minimum ", *ad.minimum);
    }
  }
  return absl::OkStatus();
}

// Defaults, then type checks of every declared attr.
Status FillDefaultAttrs(const OpDef& def, AttrMap& attrs) {
  for (const AttrDef& ad : def.attrs) {
    auto it = attrs.find(ad.name);
    if (it == attrs.end()) {
      if (!ad.default_value) return errors::InvalidArgument("Attr '", ad.name, "' (", ad.type, ") is missing");
      it = attrs.emplace(ad.name, *ad.default_value).first;
    }
    RETURN_IF_ERROR(CheckAttrValue(ad, it->second));
  }
  return absl::OkStatus();
}

Status FillOutputTypes(const OpDef& def, AttrMap& attrs, std::vector<DType>* output_types) {
  for (const ArgDef& a : def.outputs) {
    if (!a.type_list_attr.empty() && a.number_attr.empty()) {
      const auto& types = *attrs[a.type_list_attr].get_if<std::vector<DType>>();
      if (static_cast<int64_t>(types.size()) > kMaxArgTensors) {
        return errors::InvalidArgument("Output '", a.name, "' has too many types (limit ", kMaxArgTensors, ")");
      }
      for (DType t : types) output_types->push_back(a.is_ref ? MakeRefType(t) : t);
      continue;
    }
    int64_t count = 1;
    if (!a.number_attr.empty()) count = *attrs[a.number_attr].get_if<int64_t>();
    if (count < 0 || count > kMaxArgTensors) {
      return errors::InvalidArgument("Output '", a.name, "' would have ", count, " tensors (limit ", kMaxArgTensors,
                                     ")");
    }
    for (int64_t i = 0; i < count; ++i) {
      DType t;
      if (a.type != DT_INVALID) t = a.type;
      else if (!a.type_attr.empty()) t = *attrs[a.type_attr].get_if<DType>();
      else t = (*attrs[a.type_list_attr].get_if<std::vector<DType>>())[i];
      output_types->push_back(a.is_ref ? MakeRefType(t) : t);
    }
  }
  return absl::OkStatus();
}

}  // namespace

Status Graph::FillAttrsAndTypes(NodeSpec* spec, NodeProperties* props) const {
  const OpDef& def = *props->op_def;
  AttrMap& attrs = spec->attrs;
  RETURN_IF_ERROR(CheckAttrNames(def, attrs));
  RETURN_IF_ERROR(FillInputTypes(this, def, spec->inputs, attrs, &props->input_types));
  RETURN_IF_ERROR(FillDefaultAttrs(def, attrs));
  RETURN_IF_ERROR(FillOutputTypes(def, attrs, &props->output_types));
  props->attrs = attrs;
  return absl::OkStatus();
}

StatusOr<Node*> Graph::AddNode(NodeSpec spec) {
  auto annotate = [&](const Status& s) {
    return errors::Annotate(s, absl::StrCat("Node '", spec.name, "' (op ", spec.op, "): "));
  };
  // Internal ops (_Arg, _Retval, ...) may have names that start with '_', which users' cannot.
  bool internal_name = !spec.op.empty() && spec.op[0] == '_' && spec.name.size() > 1 && spec.name[0] == '_' &&
                       IsValidNodeName(absl::string_view(spec.name).substr(1));
  if (!internal_name && !IsValidNodeName(spec.name)) {
    return errors::InvalidArgument("Node name '", spec.name, "' is not valid (op ", spec.op,
                                   "): names match [A-Za-z0-9.][A-Za-z0-9_.\\-/]*");
  }
  if (IsNameUsed(spec.name)) return errors::InvalidArgument("Duplicate node name in graph: '", spec.name, "'");
  auto def_or = OpRegistry::Global()->LookUpOrError(spec.op);
  if (!def_or.ok()) return annotate(def_or.status());
  auto props = std::make_shared<NodeProperties>();
  props->name = spec.name;
  props->op = spec.op;
  props->op_def = *def_or;
  props->requested_device = spec.device;
  if (Status s = FillAttrsAndTypes(&spec, props.get()); !s.ok()) return annotate(s);
  if (!spec.device.empty()) {
    if (auto d = DeviceName::Parse(spec.device); !d.ok()) return annotate(d.status());
  }
  for (Node* c : spec.control_inputs) {
    if (c == nullptr) return annotate(errors::InvalidArgument("Null control input"));
    if (c->graph() != this) {
      return annotate(errors::InvalidArgument("Control input '", c->name(), "' belongs to another graph"));
    }
  }

  // Static shapes.
  std::vector<PartialTensorShape> in_shapes;
  std::vector<const Tensor*> in_values;
  for (const NodeOut& in : spec.inputs) {
    in_shapes.push_back(in.node->output_shape(in.index));
    in_values.push_back(in.index == 0 ? in.node->const_value() : nullptr);
  }
  InferenceContext ic(props.get(), in_shapes, in_values);
  if (Status s = props->op_def->shape_fn(&ic); !s.ok()) {
    std::string shapes = absl::StrJoin(in_shapes, ", ",
                                       [](std::string* o, const PartialTensorShape& p) { o->append(p.DebugString()); });
    return errors::Annotate(s, absl::StrCat("Node '", spec.name, "' (op ", spec.op, ") with input shapes [", shapes,
                                            "]: "));
  }

  auto node = std::make_unique<Node>();
  node->id_ = static_cast<int>(nodes_.size());
  node->graph_ = this;
  node->props_ = props;
  node->output_shapes_ = ic.TakeOutputs();
  node->output_shapes_.resize(props->output_types.size());
  node->data_inputs_.resize(spec.inputs.size(), nullptr);
  if (props->op == "Const") {
    auto it = props->attrs.find("value");
    if (it != props->attrs.end()) node->const_value_ = it->second.get_if<Tensor>();
  }
  Node* n = node.get();
  nodes_.push_back(std::move(node));
  by_name_[n->name()] = n;
  ++num_nodes_;
  for (size_t i = 0; i < spec.inputs.size(); ++i)
    NewEdge(spec.inputs[i].node, spec.inputs[i].index, n, static_cast<int>(i));
  for (Node* c : spec.control_inputs) RETURN_IF_ERROR(AddControlEdge(c, n));
  return n;
}

}  // namespace dflow
