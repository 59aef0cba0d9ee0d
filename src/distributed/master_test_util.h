// For tests that drive a Master directly: one RunStep with named feeds, fetches and targets.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "distributed/master.h"
#include "tensor/tensor_proto.h"

namespace dflow {

inline StatusOr<std::vector<Tensor>> RunStepOnMaster(Master* master, const std::string& session,
                                                     const std::vector<std::pair<std::string, Tensor>>& feeds,
                                                     const std::vector<std::string>& fetches,
                                                     const std::vector<std::string>& targets = {}) {
  proto::RunStepRequest req;
  req.set_session_handle(session);
  for (const auto& [name, t] : feeds) {
    proto::NamedTensor* f = req.add_feed();
    f->set_name(name);
    TensorToProto(t, f->mutable_tensor());
  }
  for (const auto& f : fetches) req.add_fetch(f);
  for (const auto& t : targets) req.add_target(t);
  proto::RunStepResponse resp;
  RETURN_IF_ERROR(master->RunStep(req, &resp, nullptr));
  std::vector<Tensor> out;
  for (const auto& p : resp.tensor()) {
    ASSIGN_OR_RETURN(Tensor t, TensorFromProto(p));
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace dflow
