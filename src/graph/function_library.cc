#include "graph/function_library.h"

#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "graph/graph.h"
#include "graph/graph_def.h"
#include "proto/graph.pb.h"

namespace dflow {
namespace {

// The number of tensors of output arg `a`, from the node's attrs (`find` returns nullptr for an
// attr the node does not set; the OpDef's default applies then).
template <typename FindAttr>
StatusOr<int64_t> ArgLength(const OpDef& op, const ArgDef& a, const FindAttr& find) {
  const std::string& attr = !a.number_attr.empty() ? a.number_attr : a.type_list_attr;
  if (attr.empty()) return 1;
  AttrValue v;
  RETURN_IF_ERROR(find(attr, &v));
  if (v.empty()) {
    const AttrDef* def = op.FindAttr(attr);
    if (def == nullptr || !def->default_value) {
      return errors::InvalidArgument("attr '", attr, "' that sizes output '", a.name, "' is missing");
    }
    v = *def->default_value;
  }
  if (const int64_t* n = v.get_if<int64_t>()) return *n;
  if (const auto* types = v.get_if<std::vector<DType>>()) return static_cast<int64_t>(types->size());
  return errors::InvalidArgument("attr '", attr, "' that sizes output '", a.name, "' has type ", v.TypeName());
}

// Output arg name and index within it of each flat output of a node.
template <typename FindAttr>
StatusOr<std::vector<std::pair<std::string, int>>> OutputArgs(const OpDef& op, const FindAttr& find) {
  std::vector<std::pair<std::string, int>> out;
  for (const ArgDef& a : op.outputs) {
    ASSIGN_OR_RETURN(int64_t n, ArgLength(op, a, find));
    if (n < 0 || n > (1 << 20)) return errors::InvalidArgument("output '", a.name, "' has ", n, " tensors");
    for (int64_t i = 0; i < n; ++i) out.emplace_back(a.name, static_cast<int>(i));
  }
  return out;
}

// TensorFlow's function names: non-empty, of [A-Za-z0-9_.\-/<>] (tf.function writes names such as
// "__inference_f_50", which node names could not start with).
bool IsValidFunctionName(absl::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '.' || c == '-' || c == '/' || c == '<' || c == '>';
    if (!ok) return false;
  }
  return true;
}

std::string ArgName(int i) { return absl::StrCat("arg", i); }
std::string RetName(int i) { return absl::StrCat("output", i); }

}  // namespace

Status FunctionLibraryDefinition::Add(const proto::FunctionDef& fdef) {
  const proto::OpDef& sig = fdef.signature();
  if (!IsValidFunctionName(sig.name())) {
    return errors::InvalidArgument("Function name '", absl::CEscape(sig.name()), "' is invalid");
  }
  for (const auto* args : {&sig.input_arg(), &sig.output_arg()}) {
    for (const proto::OpDef::ArgDef& a : *args) {
      if (a.name().empty() || !IsValidDType(a.type()) || !a.type_attr().empty() || !a.number_attr().empty() ||
          !a.type_list_attr().empty() || a.is_ref()) {
        return errors::InvalidArgument("Function ", sig.name(), ": argument '", absl::CEscape(a.name()),
                                       "' must have a fixed, non-reference type of its own");
      }
    }
  }
  for (const proto::OpDef::ArgDef& a : sig.output_arg()) {
    if (fdef.ret().find(a.name()) == fdef.ret().end()) {
      return errors::InvalidArgument("Function ", sig.name(), ": result '", a.name(), "' has no ret entry");
    }
  }
  if (sig.attr_size() > 0) {
    return errors::InvalidArgument("Function ", sig.name(), " has attrs: dflow's functions are monomorphic");
  }
  auto it = functions_.find(sig.name());
  if (it != functions_.end()) {
    if (it->second->SerializeAsString() == fdef.SerializeAsString()) return absl::OkStatus();
    return errors::InvalidArgument("Function ", sig.name(), " is defined twice, differently");
  }
  functions_.emplace(sig.name(), std::make_shared<const proto::FunctionDef>(fdef));
  return absl::OkStatus();
}

Status FunctionLibraryDefinition::AddLibrary(const proto::FunctionDefLibrary& library) {
  if (library.gradient_size() > 0) {
    return errors::InvalidArgument("Function gradients (GradientDef for ", library.gradient(0).function_name(),
                                   ") are not supported");
  }
  for (const proto::FunctionDef& f : library.function()) RETURN_IF_ERROR(Add(f));
  return absl::OkStatus();
}

const proto::FunctionDef* FunctionLibraryDefinition::Find(absl::string_view name) const {
  auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : it->second.get();
}

std::string FunctionLibraryDefinition::UniqueName(absl::string_view base) const {
  std::string name(base);
  for (int i = 1; functions_.count(name); ++i) name = absl::StrCat(base, "_", i);
  return name;
}

void FunctionLibraryDefinition::ToProto(proto::FunctionDefLibrary* library) const {
  library->Clear();
  for (const auto& [name, f] : functions_) *library->add_function() = *f;
}

Status GraphToFunctionDef(const Graph& body, const std::string& name, const std::vector<const Node*>& args,
                          const std::vector<NodeOut>& rets, proto::FunctionDef* fdef, const std::vector<bool>* keep) {
  fdef->Clear();
  proto::OpDef* sig = fdef->mutable_signature();
  sig->set_name(name);
  std::map<const Node*, std::string> arg_names;
  for (size_t i = 0; i < args.size(); ++i) {
    auto* a = sig->add_input_arg();
    a->set_name(ArgName(static_cast<int>(i)));
    a->set_type(static_cast<proto::DataType>(BaseType(args[i]->output_type(0))));
    arg_names[args[i]] = a->name();
  }
  auto kept = [&](const Node* n) {
    return keep == nullptr || (n->id() < static_cast<int>(keep->size()) && (*keep)[n->id()]);
  };
  auto source = [&](const Node* src, int output) -> StatusOr<std::string> {
    auto arg = arg_names.find(src);
    if (arg != arg_names.end()) return arg->second;
    if (!kept(src)) {
      return errors::InvalidArgument("Function ", name, " reads '", src->name(), "', which is not part of it");
    }
    ASSIGN_OR_RETURN(auto outs, OutputArgs(src->op_def(), [&](const std::string& attr, AttrValue* v) -> Status {
                       auto it = src->attrs().find(attr);
                       if (it != src->attrs().end()) *v = it->second;
                       return absl::OkStatus();
                     }));
    if (output < 0 || static_cast<size_t>(output) >= outs.size()) {
      return errors::Internal("Output ", output, " of '", src->name(), "' has no output arg");
    }
    return absl::StrCat(src->name(), ":", outs[output].first, ":", outs[output].second);
  };
  for (const Node* n : body.nodes()) {
    if (arg_names.count(n) || !kept(n)) continue;
    proto::NodeDef* nd = fdef->add_node_def();
    nd->set_name(n->name());
    nd->set_op(n->op());
    for (const Edge* e : n->data_inputs()) {
      if (e == nullptr) return errors::InvalidArgument("Function ", name, ": node '", n->name(), "' misses an input");
      ASSIGN_OR_RETURN(std::string in, source(e->src, e->src_output));
      nd->add_input(std::move(in));
    }
    for (const Edge* e : n->control_inputs()) {
      if (arg_names.count(e->src)) continue;  // an argument is there before anything runs
      if (!kept(e->src)) {
        return errors::InvalidArgument("Function ", name, ": '", n->name(), "' depends on '", e->src->name(),
                                       "', which is not part of it");
      }
      nd->add_input(absl::StrCat("^", e->src->name()));
    }
    for (const auto& [k, v] : n->attrs()) AttrValueToProto(v, &(*nd->mutable_attr())[k]);
  }
  for (size_t i = 0; i < rets.size(); ++i) {
    auto* r = sig->add_output_arg();
    r->set_name(RetName(static_cast<int>(i)));
    r->set_type(static_cast<proto::DataType>(BaseType(rets[i].node->output_type(rets[i].index))));
    ASSIGN_OR_RETURN(std::string in, source(rets[i].node, rets[i].index));
    (*fdef->mutable_ret())[r->name()] = std::move(in);
  }
  return absl::OkStatus();
}

Status FunctionDefToGraphDef(const proto::FunctionDef& fdef, proto::GraphDef* def) {
  def->Clear();
  const std::string& fn = fdef.signature().name();
  std::set<std::string> args;
  for (int i = 0; i < fdef.signature().input_arg_size(); ++i) {
    const auto& a = fdef.signature().input_arg(i);
    proto::NodeDef* nd = def->add_node();
    nd->set_name(a.name());
    nd->set_op("_Arg");
    (*nd->mutable_attr())["T"].set_type(a.type());
    (*nd->mutable_attr())["index"].set_i(i);
    args.insert(a.name());
  }
  std::map<std::string, const proto::NodeDef*> nodes;
  for (const proto::NodeDef& n : fdef.node_def()) nodes[n.name()] = &n;
  // "x" (an argument) or "node:out_arg:index" -> the GraphDef's "x" or "node:flat_index".
  auto translate = [&](const std::string& ref) -> StatusOr<std::string> {
    if (!ref.empty() && ref[0] == '^') {
      if (args.count(ref.substr(1))) return std::string();  // control on an argument: always met
      if (!nodes.count(ref.substr(1))) {
        return errors::InvalidArgument("Function ", fn, ": control input '", ref, "' names no node");
      }
      return ref;
    }
    std::vector<std::string> parts = absl::StrSplit(ref, ':');
    if (parts.size() == 1) {
      if (!args.count(ref)) return errors::InvalidArgument("Function ", fn, ": '", ref, "' names no argument");
      return ref;
    }
    int index = 0;
    if (parts.size() != 3 || !absl::SimpleAtoi(parts[2], &index) || index < 0) {
      return errors::InvalidArgument("Function ", fn, ": bad input reference '", ref,
                                     "' (expected an argument or node:output:index)");
    }
    auto it = nodes.find(parts[0]);
    if (it == nodes.end()) return errors::InvalidArgument("Function ", fn, ": '", ref, "' names no node");
    const proto::NodeDef& src = *it->second;
    const OpDef* op = OpRegistry::Global()->LookUp(src.op());
    if (op == nullptr) return errors::NotFound("Function ", fn, ": Op type not registered '", src.op(), "'");
    ASSIGN_OR_RETURN(auto outs, OutputArgs(*op, [&](const std::string& attr, AttrValue* v) -> Status {
                       auto a = src.attr().find(attr);
                       if (a == src.attr().end()) return absl::OkStatus();
                       const AttrDef* ad = op->FindAttr(attr);
                       return AttrValueFromProto(a->second, ad ? ad->type : "", v);
                     }));
    for (size_t flat = 0; flat < outs.size(); ++flat) {
      if (outs[flat].first == parts[1] && outs[flat].second == index) {
        return flat == 0 ? parts[0] : absl::StrCat(parts[0], ":", flat);
      }
    }
    return errors::InvalidArgument("Function ", fn, ": node '", parts[0], "' (", src.op(), ") has no output ", parts[1],
                                   ":", index);
  };
  for (const proto::NodeDef& n : fdef.node_def()) {
    if (args.count(n.name())) {
      return errors::InvalidArgument("Function ", fn, ": node '", n.name(), "' has the name of an argument");
    }
    proto::NodeDef* nd = def->add_node();
    *nd = n;
    nd->clear_input();
    nd->clear_device();
    for (const std::string& in : n.input()) {
      ASSIGN_OR_RETURN(std::string t, translate(in));
      if (!t.empty()) nd->add_input(std::move(t));
    }
  }
  for (int i = 0; i < fdef.signature().output_arg_size(); ++i) {
    const auto& r = fdef.signature().output_arg(i);
    auto ret = fdef.ret().find(r.name());
    if (ret == fdef.ret().end())
      return errors::InvalidArgument("Function ", fn, ": result '", r.name(), "' has no ret");
    std::string name = absl::StrCat(r.name(), "_retval");
    for (int k = 1; args.count(name) || nodes.count(name); ++k) name = absl::StrCat(r.name(), "_retval_", k);
    proto::NodeDef* nd = def->add_node();
    nd->set_name(name);
    nd->set_op("_Retval");
    ASSIGN_OR_RETURN(std::string in, translate(ret->second));
    nd->add_input(std::move(in));
    (*nd->mutable_attr())["T"].set_type(r.type());
    (*nd->mutable_attr())["index"].set_i(i);
  }
  return absl::OkStatus();
}

}  // namespace dflow
