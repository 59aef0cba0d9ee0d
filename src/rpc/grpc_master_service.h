// The gRPC face of a Master: the MasterService handlers (synchronous). No gRPC types here.
#pragma once

#include <memory>

namespace grpc {
class Service;
}

namespace dflow {
class Master;
namespace rpc {

std::unique_ptr<grpc::Service> NewGrpcMasterService(Master* master);

}  // namespace rpc
}  // namespace dflow
