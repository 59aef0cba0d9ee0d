// ClientSession: runs the part of a scope's graph that the fetched tensors and target ops need.
//
//   ClientSession session(root);                          // in this process
//   ClientSession remote(root, "grpc://localhost:2222");  // on a server
//   auto out = session.Run({{x, 3.0f}, {y, 4.5f}}, {z});  // StatusOr<std::vector<Tensor>>
//
// Nodes added to the graph after a run are sent to the session at the next run. Variables of
// a graph are shared by every in-process session of that graph and freed with the graph.
// Thread-safe: concurrent Run calls are allowed.
#pragma once

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "dflow/scope.h"
#include "dflow/session_interface.h"

namespace dflow {

class ClientSession {
 public:
  using FeedDict = std::unordered_map<Output, Input::Initializer>;

  explicit ClientSession(const Scope& scope, const SessionOptions& options = SessionOptions());
  ClientSession(const Scope& scope, const std::string& target);
  ~ClientSession();

  StatusOr<std::vector<Tensor>> Run(const std::vector<Output>& fetches) const;
  StatusOr<std::vector<Tensor>> Run(const FeedDict& feeds, const std::vector<Output>& fetches) const;
  StatusOr<std::vector<Tensor>> Run(const FeedDict& feeds, const std::vector<Output>& fetches,
                                    const std::vector<Operation>& targets, RunMetadata* metadata = nullptr,
                                    const RunOptions& options = RunOptions()) const;
  // Runs target ops only.
  Status Run(const std::vector<Operation>& targets) const;

  // The underlying session (names instead of Outputs).
  Session* session() const { return session_.get(); }

 private:
  Status Sync() const;  // sends the nodes added since the last run

  std::shared_ptr<Graph> graph_;
  Status init_status_;
  std::unique_ptr<Session> session_;
  mutable std::mutex mu_;
  mutable int exported_ = 0;  // node ids below this were sent
  mutable bool created_ = false;
};

}  // namespace dflow
