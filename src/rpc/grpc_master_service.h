// The gRPC face of a Master: the MasterService handlers (synchronous). No gRPC types here.
#pragma once

#include <memory>

namespace grpc {
class Service;
}

namespace dflow {
class Master;
namespace rpc {
class RpcAuthenticator;

// `master` and `auth` must outlive the service; every method first checks the call with `auth`
// (Reset and CompleteJob as the chief's).
std::unique_ptr<grpc::Service> NewGrpcMasterService(Master* master, const RpcAuthenticator* auth);

}  // namespace rpc
}  // namespace dflow
