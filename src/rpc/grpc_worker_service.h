// The gRPC face of a Worker: the WorkerService handlers (synchronous: each call holds a server
// thread while it runs; RecvTensor streams the tensor in chunks). No gRPC types in this header.
#pragma once

#include <memory>

namespace grpc {
class Service;
}

namespace dflow {
class Worker;
namespace rpc {

// The service object to register with a grpc::ServerBuilder. `worker` must outlive it.
std::unique_ptr<grpc::Service> NewGrpcWorkerService(Worker* worker);

}  // namespace rpc
}  // namespace dflow
