#include "api/scope_internal.h"
#include "dflow/session.h"
#include "graph/graph_def.h"
#include "proto/graph.pb.h"
#include "runtime/local_device.h"

namespace dflow {

ClientSession::ClientSession(const Scope& scope, const std::string& target)
    : ClientSession(scope, [&] {
        SessionOptions o;
        o.target = target;
        return o;
      }()) {}

ClientSession::ClientSession(const Scope& scope, const SessionOptions& options) : graph_(scope.graph_as_shared_ptr()) {
  InitDflow();
  SessionOptions o = options;
  if ((o.target.empty() || o.target == "local") && o.default_container.empty()) {
    // Every in-process session of this graph shares its variables; they go with the graph.
    o.default_container = absl::StrCat("__graph_", graph_->id());
    Scope::Collections* c = scope.collections();
    if (!c->container_cleanup_registered) {
      c->container_cleanup_registered = true;
      std::string container = o.default_container;
      graph_->AddDestructionCallback([container] { LocalCpuDevice()->resource_manager()->Cleanup(container); });
    }
  }
  auto s = NewSession(o);
  if (s.ok()) session_ = std::move(s).value();
  else init_status_ = s.status();
}

ClientSession::~ClientSession() {
  if (session_) session_->Close().IgnoreError();
}

Status ClientSession::Sync() const {
  if (!graph_->build_status().ok()) {
    return errors::Annotate(graph_->build_status(), "The graph has an error from when it was built: ");
  }
  if (created_ && exported_ == graph_->num_node_ids()) return absl::OkStatus();
  proto::GraphDef def;
  ExportGraphDef(*graph_, &def, exported_);
  RETURN_IF_ERROR(created_ ? session_->Extend(def) : session_->Create(def));
  created_ = true;
  exported_ = graph_->num_node_ids();
  return absl::OkStatus();
}

StatusOr<std::vector<Tensor>> ClientSession::Run(const std::vector<Output>& fetches) const {
  return Run(FeedDict(), fetches, {});
}

StatusOr<std::vector<Tensor>> ClientSession::Run(const FeedDict& feeds, const std::vector<Output>& fetches) const {
  return Run(feeds, fetches, {});
}

Status ClientSession::Run(const std::vector<Operation>& targets) const { return Run(FeedDict(), {}, targets).status(); }

StatusOr<std::vector<Tensor>> ClientSession::Run(const FeedDict& feeds, const std::vector<Output>& fetches,
                                                 const std::vector<Operation>& targets, RunMetadata* metadata,
                                                 const RunOptions& options) const {
  RETURN_IF_ERROR(init_status_);
  {
    std::lock_guard<std::mutex> l(mu_);
    RETURN_IF_ERROR(Sync());
  }
  auto check = [&](Node* n, const char* what, size_t i) -> Status {
    if (n == nullptr) {
      return errors::InvalidArgument(what, " #", i, " is invalid: the op that should produce it failed to build");
    }
    if (n->graph() != graph_.get()) return errors::InvalidArgument(what, " #", i, " belongs to another graph");
    return absl::OkStatus();
  };
  std::vector<std::pair<std::string, Tensor>> inputs;
  size_t i = 0;
  for (const auto& [out, value] : feeds) {
    RETURN_IF_ERROR(check(out.node(), "Feed", i++));
    StatusOr<Tensor> t = value.AsType(BaseType(out.dtype()));
    if (!t.ok()) return errors::Annotate(t.status(), absl::StrCat("Feed for '", out.name(), "': "));
    inputs.emplace_back(out.name(), std::move(t).value());
  }
  std::vector<std::string> output_names;
  for (i = 0; i < fetches.size(); ++i) {
    RETURN_IF_ERROR(check(fetches[i].node(), "Fetch", i));
    output_names.push_back(fetches[i].name());
  }
  std::vector<std::string> target_names;
  for (i = 0; i < targets.size(); ++i) {
    RETURN_IF_ERROR(check(targets[i].node(), "Target", i));
    target_names.push_back(targets[i].name());
  }
  std::vector<Tensor> outputs;
  RETURN_IF_ERROR(session_->Run(options, inputs, output_names, target_names, &outputs, metadata));
  return outputs;
}

}  // namespace dflow
