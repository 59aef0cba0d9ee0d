#include "graph/partition.h"

#include <set>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "graph/control_flow_info.h"
#include "graph/function_library.h"
#include "graph/graph_def.h"

namespace dflow {
namespace {

std::string TensorString(const Node* n, int output) {
  return output == 0 ? n->name() : absl::StrCat(n->name(), ":", output);
}

std::string Describe(const Edge* e) {
  if (e->IsControlEdge()) return absl::StrCat("control edge '", e->src->name(), "' -> '", e->dst->name(), "'");
  return absl::StrCat("edge '", TensorString(e->src, e->src_output), "' -> '", e->dst->name(), "' (input ",
                      e->dst_input, ")");
}

class Partitioner {
 public:
  Partitioner(const PartitionOptions& options, const Graph& g, std::map<std::string, proto::GraphDef>* partitions)
      : options_(options), g_(g), partitions_(partitions) {}

  Status Run() {
    partitions_->clear();
    if (!options_.node_to_loc) return errors::InvalidArgument("PartitionGraph needs a node_to_loc function");
    std::vector<Node*> nodes = g_.nodes();
    loc_.assign(g_.num_node_ids(), std::string());
    for (Node* n : nodes) {
      if (n->assigned_device().empty()) {
        return errors::InvalidArgument("Node '", n->name(), "' (op ", n->op(),
                                       ") has no assigned device: place the graph before partitioning it");
      }
      loc_[n->id()] = options_.node_to_loc(*n);
      if (loc_[n->id()].empty()) {
        return errors::InvalidArgument("Node '", n->name(), "' (op ", n->op(), ") on device '", n->assigned_device(),
                                       "' has no location");
      }
    }
    ASSIGN_OR_RETURN(cf_, BuildControlFlowInfo(g_));
    for (Node* n : nodes) RETURN_IF_ERROR(AddNode(n));
    // The versions an export writes (so that importers read the partitions as this version).
    proto::GraphDef versions;
    ExportGraphDef(g_, &versions, g_.num_node_ids());
    for (auto& [loc, def] : *partitions_) {
      *def.mutable_versions() = versions.versions();
      // Every partition gets the functions its nodes may name (dataset map functions).
      if (!g_.library().empty()) g_.library().ToProto(def.mutable_library());
    }
    return absl::OkStatus();
  }

 private:
  Status AddNode(const Node* n) {
    const std::string& loc = loc_[n->id()];
    proto::NodeDef nd;
    nd.set_name(n->name());
    nd.set_op(n->op());
    nd.set_device(n->assigned_device());
    for (const Edge* e : n->data_inputs()) {
      if (e == nullptr) return errors::InvalidArgument("Node '", n->name(), "' has a missing input");
      if (loc_[e->src->id()] == loc) {
        nd.add_input(TensorString(e->src, e->src_output));
        continue;
      }
      RETURN_IF_ERROR(CheckCrossing(e));
      if (IsRefType(n->input_type(e->dst_input))) {
        return errors::InvalidArgument("The ", Describe(e), " passes a reference to a variable from ",
                                       e->src->assigned_device(), " to ", n->assigned_device(),
                                       ": a node that takes a reference must be on its variable's device");
      }
      ASSIGN_OR_RETURN(std::string recv, RecvFor(e));
      nd.add_input(recv);
    }
    for (const Edge* e : n->control_inputs()) {
      if (loc_[e->src->id()] == loc) {
        nd.add_input(absl::StrCat("^", e->src->name()));
        continue;
      }
      RETURN_IF_ERROR(CheckCrossing(e));
      ASSIGN_OR_RETURN(std::string recv, RecvFor(e));
      nd.add_input(absl::StrCat("^", recv));
    }
    auto* attrs = nd.mutable_attr();
    for (const auto& [k, v] : n->attrs()) AttrValueToProto(v, &(*attrs)[k]);
    *(*partitions_)[loc].add_node() = std::move(nd);
    return absl::OkStatus();
  }

  // Edges are cut in the root frame only: a _Recv has no inputs and so runs in the root frame.
  Status CheckCrossing(const Edge* e) const {
    int f = cf_.out_frame[e->src->id()];
    if (f <= 0) f = cf_.frame_of[e->dst->id()];
    if (f > 0) {
      return errors::Unimplemented("The ", Describe(e), " crosses from ", loc_[e->src->id()], " to ",
                                   loc_[e->dst->id()], " inside while loop '", cf_.frames[f].name,
                                   "': the nodes of a loop must be on one device");
    }
    return absl::OkStatus();
  }

  // The name of the _Recv that delivers the edge's tensor (or, for a control edge, the signal
  // that its source ran) in the destination's location, made on first use with its _Send.
  StatusOr<std::string> RecvFor(const Edge* e) {
    const Node* src = e->src;
    const Node* dst = e->dst;
    const std::string& dst_loc = loc_[dst->id()];
    auto key = std::make_tuple(src->id(), e->src_output, dst_loc);
    auto it = recvs_.find(key);
    if (it != recvs_.end()) return it->second;

    std::string tensor_name;
    std::string send_name, recv_name, const_name;
    do {
      tensor_name = absl::StrCat("edge_", next_edge_++, "_", src->name());
      send_name = absl::StrCat(tensor_name, "/_send");
      recv_name = absl::StrCat(tensor_name, "/_recv");
      const_name = absl::StrCat(tensor_name, "/_control");
    } while (Taken(send_name) || Taken(recv_name) || Taken(const_name));
    taken_.insert({send_name, recv_name, const_name});

    proto::GraphDef& src_part = (*partitions_)[loc_[src->id()]];
    std::string sent;  // the tensor the _Send sends
    DType dtype;
    if (e->IsControlEdge()) {
      // A dummy scalar that exists once the source has run (and is dead when the source is).
      proto::NodeDef* c = src_part.add_node();
      c->set_name(const_name);
      c->set_op("Const");
      c->set_device(src->assigned_device());
      c->add_input(absl::StrCat("^", src->name()));
      AttrValueToProto(AttrValue(DT_FLOAT), &(*c->mutable_attr())["dtype"]);
      AttrValueToProto(AttrValue(Tensor(0.0f)), &(*c->mutable_attr())["value"]);
      sent = const_name;
      dtype = DT_FLOAT;
    } else {
      sent = TensorString(src, e->src_output);
      dtype = BaseType(src->output_type(e->src_output));
    }
    const std::string& send_device = src->assigned_device();
    const std::string& recv_device = dst->assigned_device();
    uint64_t incarnation = options_.get_incarnation ? options_.get_incarnation(send_device) : 0;
    auto common = [&](proto::NodeDef* nd) {
      auto* a = nd->mutable_attr();
      AttrValueToProto(AttrValue(tensor_name), &(*a)["tensor_name"]);
      AttrValueToProto(AttrValue(send_device), &(*a)["send_device"]);
      AttrValueToProto(AttrValue(static_cast<int64_t>(incarnation)), &(*a)["send_device_incarnation"]);
      AttrValueToProto(AttrValue(recv_device), &(*a)["recv_device"]);
      AttrValueToProto(AttrValue(false), &(*a)["client_terminated"]);
    };
    proto::NodeDef* send = src_part.add_node();
    send->set_name(send_name);
    send->set_op("_Send");
    send->set_device(send_device);
    send->add_input(sent);
    AttrValueToProto(AttrValue(dtype), &(*send->mutable_attr())["T"]);
    common(send);

    proto::NodeDef* recv = (*partitions_)[dst_loc].add_node();
    recv->set_name(recv_name);
    recv->set_op("_Recv");
    recv->set_device(recv_device);
    AttrValueToProto(AttrValue(dtype), &(*recv->mutable_attr())["tensor_type"]);
    common(recv);

    recvs_.emplace(key, recv_name);
    return recv_name;
  }

  bool Taken(const std::string& name) const { return g_.IsNameUsed(name) || taken_.count(name) > 0; }

  const PartitionOptions& options_;
  const Graph& g_;
  std::map<std::string, proto::GraphDef>* partitions_;
  std::vector<std::string> loc_;  // by node id
  ControlFlowInfo cf_;
  int64_t next_edge_ = 0;
  std::unordered_set<std::string> taken_;
  // (source node id, output or kControlSlot, destination location) -> its _Recv.
  std::map<std::tuple<int, int, std::string>, std::string> recvs_;
};

}  // namespace

Status PartitionGraph(const PartitionOptions& options, const Graph& g,
                      std::map<std::string, proto::GraphDef>* partitions) {
  Status s = Partitioner(options, g, partitions).Run();
  if (!s.ok()) partitions->clear();
  return s;
}

}  // namespace dflow
