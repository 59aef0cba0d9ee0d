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
class RpcAuthenticator;

// The service object to register with a grpc::ServerBuilder. `worker` and `auth` must outlive it;
// every method first checks the call with `auth` (JobComplete and Reset as the chief's).
std::unique_ptr<grpc::Service> NewGrpcWorkerService(Worker* worker, const RpcAuthenticator* auth);

}  // namespace rpc
}  // namespace dflow
