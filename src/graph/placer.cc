#include "graph/placer.h"

#include <cstdio>
#include <numeric>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "framework/op_kernel.h"

namespace dflow {
namespace {

// Union-find over node ids: the colocation groups.
class Groups {
 public:
  explicit Groups(int n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);  // the lowest id (the producer) is the root
  }

 private:
  std::vector<int> parent_;
};

// A node that takes a reference (Ref(T)) or a resource handle works on state that lives on the
// device of the node producing it: it must run there.
bool UsesStateOf(const Node* n, int input) {
  DType t = n->input_type(input);
  return IsRefType(t) || BaseType(t) == DT_RESOURCE;
}

class Placer {
 public:
  Placer(Graph* graph, const std::vector<Device*>& devices, const PlacementOptions& options)
      : graph_(graph), devices_(devices), options_(options) {}

  Status Run() {
    if (devices_.empty()) return errors::InvalidArgument("No devices to place the graph on");
    std::vector<Node*> nodes = graph_->nodes();
    Groups groups(graph_->num_node_ids());
    for (Node* n : nodes) {
      for (const Edge* e : n->data_inputs()) {
        if (e != nullptr && UsesStateOf(n, e->dst_input)) groups.Union(e->src->id(), n->id());
      }
      // TensorFlow's explicit colocation: "_class" = ["loc:@other_node", ...]. A name that is not
      // in this graph (pruned away) is ignored.
      auto cls = n->attrs().find("_class");
      const auto* names = cls == n->attrs().end() ? nullptr : cls->second.get_if<std::vector<std::string>>();
      if (names != nullptr) {
        for (const std::string& c : *names) {
          if (!absl::StartsWith(c, "loc:@")) continue;
          if (Node* other = graph_->FindNode(absl::string_view(c).substr(5))) groups.Union(other->id(), n->id());
        }
      }
    }
    std::vector<std::vector<Node*>> members(graph_->num_node_ids());
    for (Node* n : nodes) members[groups.Find(n->id())].push_back(n);
    for (Node* n : nodes) {
      std::vector<Node*>& group = members[groups.Find(n->id())];
      if (group.empty() || group[0] != n) continue;  // placed with its group's first node
      RETURN_IF_ERROR(PlaceGroup(group));
    }
    return absl::OkStatus();
  }

 private:
  std::string DeviceList() const {
    return absl::StrJoin(devices_, ", ", [](std::string* o, const Device* d) { o->append(d->name()); });
  }

  bool HasKernels(const Device* d, const std::vector<Node*>& group) const {
    for (const Node* n : group)
      if (!KernelRegistry::Global()->HasKernel(d->device_type(), n->props())) return false;
    return true;
  }

  // The device the group asks for: the merge of its members' requests. `anchor` is the first
  // member with a request (nullptr when none has one).
  Status MergedRequest(const std::vector<Node*>& group, DeviceName* spec, const Node** anchor, int* requests) const {
    *anchor = nullptr;
    *requests = 0;
    for (const Node* n : group) {
      ASSIGN_OR_RETURN(DeviceName s, DeviceName::Parse(n->requested_device()));
      if (n->requested_device().empty()) continue;
      DeviceName merged = *spec;
      if (!merged.MergeFrom(s).ok()) {
        if (options_.allow_soft_placement) continue;  // the colocation wins over this request
        return errors::InvalidArgument(
            "Cannot colocate node '", n->name(), "' (op ", n->op(), ", requested device '", n->requested_device(),
            "') with node '", (*anchor)->name(), "' (op ", (*anchor)->op(), ", requested device '",
            (*anchor)->requested_device(),
            "'): they must share a device because one uses the variable or resource "
            "of the other (a reference or resource input, or a colocation attr); remove one of the device requests "
            "or allow soft placement");
      }
      *spec = merged;
      if (*anchor == nullptr) *anchor = n;
      ++*requests;
    }
    return absl::OkStatus();
  }

  Status PlaceGroup(const std::vector<Node*>& group) {
    DeviceName spec;
    const Node* anchor = nullptr;
    int requests = 0;
    RETURN_IF_ERROR(MergedRequest(group, &spec, &anchor, &requests));
    const Node* named = anchor != nullptr ? anchor : group[0];
    std::string requested = requests > 1 ? spec.ToString() : named->requested_device();
    Device* chosen = nullptr;
    for (Device* d : devices_) {
      if (d->parsed_name().Matches(spec) && HasKernels(d, group)) {
        chosen = d;
        break;
      }
    }
    if (chosen == nullptr) {
      bool any_match = false;
      for (Device* d : devices_) any_match |= d->parsed_name().Matches(spec);
      if (!any_match && !options_.allow_soft_placement) {
        return errors::InvalidArgument("Cannot assign a device for node '", named->name(), "': the requested device '",
                                       requested, "' matches none of the available devices [", DeviceList(), "]");
      }
      if (any_match && !options_.allow_soft_placement) {
        return errors::InvalidArgument("Cannot assign a device for node '", named->name(), "' (op ", named->op(),
                                       "): the devices matching '", requested, "' have no kernel for it",
                                       group.size() > 1 ? " or for a node colocated with it" : "",
                                       " (allow soft placement to place it elsewhere)");
      }
      // Soft placement: keep the requested job, replica and task if a device there can run the
      // group, else take the first device that can.
      DeviceName task = spec;
      task.has_type = task.has_id = false;
      for (const DeviceName* s : {static_cast<const DeviceName*>(&task), static_cast<const DeviceName*>(nullptr)}) {
        for (Device* d : devices_) {
          if ((s == nullptr || d->parsed_name().Matches(*s)) && HasKernels(d, group)) {
            chosen = d;
            break;
          }
        }
        if (chosen != nullptr) break;
      }
    }
    if (chosen == nullptr) {
      // Report the kernel registry's own explanation of what is missing.
      for (const Node* n : group) {
        bool any = false;
        for (Device* d : devices_) any |= KernelRegistry::Global()->HasKernel(d->device_type(), n->props());
        if (any) continue;
        auto k = KernelRegistry::Global()->CreateKernel(devices_[0], devices_[0]->device_type(), n->props_ptr());
        return k.ok() ? errors::Internal("No device for node '", n->name(), "'") : k.status();
      }
      return errors::InvalidArgument("Cannot place node '", group[0]->name(), "' and the ", group.size() - 1,
                                     " nodes colocated with it: no device has kernels for all of them");
    }
    for (Node* n : group) {
      n->set_assigned_device(chosen->name());
      if (options_.log_device_placement) {
        std::fprintf(stderr, "%s: (%s): %s\n", n->name().c_str(), n->op().c_str(), chosen->name().c_str());
      }
    }
    return absl::OkStatus();
  }

  Graph* graph_;
  const std::vector<Device*>& devices_;
  const PlacementOptions& options_;
};

}  // namespace

Status PlaceGraph(Graph* graph, const std::vector<Device*>& devices, const PlacementOptions& options) {
  return Placer(graph, devices, options).Run();
}

}  // namespace dflow
