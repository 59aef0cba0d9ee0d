#include <ostream>

#include "api/scope_internal.h"
#include "base/memory.h"
#include "framework/device_name.h"
#include "ops/register_all.h"
#include "rpc/grpc_server.h"
#include "runtime/direct_session.h"

namespace dflow {

void InitDflow() {
  TuneMemoryAllocator();
  RegisterAllOps();
  RegisterDirectSessionFactory();
  rpc::RegisterGrpcSessionFactory();
}

std::string PythonDTypeName(DType t) {
  if (IsRefType(t)) return PythonDTypeName(BaseType(t)) + "_ref";
  switch (t) {
    case DT_FLOAT: return "float32";
    case DT_DOUBLE: return "float64";
    default: return DTypeString(t);
  }
}

const std::string& Operation::name() const { return node_->name(); }
const std::string& Operation::type() const { return node_->op(); }
int Operation::num_outputs() const { return node_->num_outputs(); }

std::string Output::name() const {
  return valid() ? absl::StrCat(node()->name(), ":", index_) : std::string("<invalid>");
}
DType Output::dtype() const { return valid() ? node()->output_type(index_) : DT_INVALID; }
PartialTensorShape Output::shape() const { return valid() ? node()->output_shape(index_) : PartialTensorShape(); }

std::ostream& operator<<(std::ostream& os, const Output& o) {
  if (!o.valid()) return os << "Tensor(<invalid>)";
  PartialTensorShape s = o.shape();
  std::string shape;
  if (s.unknown_rank()) {
    shape = "<unknown>";
  } else {
    shape = "(";
    for (int i = 0; i < s.dims(); ++i) {
      if (i) shape += ", ";
      shape += s.dim_size(i) < 0 ? "?" : std::to_string(s.dim_size(i));
    }
    shape += s.dims() == 1 ? ",)" : ")";
  }
  return os << "Tensor(\"" << o.name() << "\", shape=" << shape << ", dtype=" << PythonDTypeName(o.dtype()) << ")";
}

std::ostream& operator<<(std::ostream& os, const Operation& o) {
  if (!o.valid()) return os << "<invalid operation>";
  return os << "name: \"" << o.name() << "\" op: \"" << o.type() << "\"";
}

Scope Scope::NewRootScope() {
  InitDflow();
  auto shared = std::make_shared<Shared>();
  shared->graph = std::make_shared<Graph>();
  shared->graph->set_client_state(std::weak_ptr<void>(std::static_pointer_cast<void>(shared)));
  return Scope(std::move(shared));
}

Scope Scope::NewSubScope(const std::string& name) const {
  Scope r = *this;
  r.op_name_.clear();
  if (name.empty()) return r;
  r.prefix_ = graph()->UniqueName(prefix_ + name) + "/";
  return r;
}

Scope Scope::WithOpName(const std::string& name) const {
  Scope r = *this;
  r.op_name_ = name;
  return r;
}

Scope Scope::WithDevice(const std::string& device) const {
  Scope r = *this;
  r.device_ = device;
  return r;
}

Scope Scope::WithDeviceFunction(DeviceFunction fn) const {
  if (!fn) return *this;
  Scope r = *this;
  r.device_functions_.push_back(std::make_shared<const DeviceFunctionLevel>(DeviceFunctionLevel{std::move(fn),
                                                                                                device_}));
  r.device_.clear();
  return r;
}

namespace {
// `inner` with the fields it leaves unset taken from `outer` (TensorFlow's
// DeviceSpec.make_merged_spec: the inner context's fields win).
StatusOr<std::string> FillUnsetFields(absl::string_view outer, absl::string_view inner) {
  if (outer.empty()) return std::string(inner);
  ASSIGN_OR_RETURN(DeviceName o, DeviceName::Parse(outer));
  ASSIGN_OR_RETURN(DeviceName i, DeviceName::Parse(inner));
  if (!i.has_job && o.has_job) i.has_job = true, i.job = o.job;
  if (!i.has_replica && o.has_replica) i.has_replica = true, i.replica = o.replica;
  if (!i.has_task && o.has_task) i.has_task = true, i.task = o.task;
  if (!i.has_type && o.has_type) i.has_type = true, i.type = o.type;
  if (!i.has_id && o.has_id) i.has_id = true, i.id = o.id;
  return i.ToString();
}
}  // namespace

StatusOr<std::string> ScopeAccess::DeviceForOp(const Scope& s, absl::string_view op, absl::string_view name,
                                               const AttrMap& attrs) {
  std::string device = s.device_;
  for (auto it = s.device_functions_.rbegin(); it != s.device_functions_.rend(); ++it) {
    StatusOr<std::string> d = (*it)->fn(DeviceRequest{op, name, device, attrs});
    if (!d.ok()) {
      return errors::Annotate(d.status(), absl::StrCat("Device function for node '", name, "' (op ", op, "): "));
    }
    StatusOr<std::string> merged = FillUnsetFields((*it)->outer_device, *d);
    if (!merged.ok()) {
      return errors::Annotate(merged.status(), absl::StrCat("Device of node '", name, "' (op ", op, "): "));
    }
    device = std::move(*merged);
  }
  return device;
}

Scope Scope::WithControlDependencies(const std::vector<Operation>& deps) const {
  Scope r = *this;
  r.control_deps_.insert(r.control_deps_.end(), deps.begin(), deps.end());
  return r;
}

void Scope::SetRandomSeed(int64_t seed) const { graph()->set_seed(seed); }
Graph* Scope::graph() const { return shared_->graph.get(); }
std::shared_ptr<Graph> Scope::graph_as_shared_ptr() const { return shared_->graph; }
Status Scope::status() const { return shared_->graph->build_status(); }
void Scope::UpdateStatus(const Status& s) const { shared_->graph->RecordBuildError(s); }
Scope::Collections* Scope::collections() const { return &shared_->collections; }

std::string Scope::GetUniqueNameForOp(const std::string& default_name) const {
  if (!op_name_.empty()) return prefix_ + op_name_;
  return graph()->UniqueName(prefix_ + default_name);
}

std::optional<Scope> ScopeAccess::ScopeOfNode(const Node* n) {
  std::shared_ptr<void> state = n->graph()->client_state();
  if (state == nullptr) return std::nullopt;
  Scope s(std::static_pointer_cast<Scope::Shared>(state));
  size_t slash = n->name().rfind('/');
  s.prefix_ = slash == std::string::npos ? "" : n->name().substr(0, slash + 1);
  s.device_ = n->requested_device();
  return s;
}

}  // namespace dflow
