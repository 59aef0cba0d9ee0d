// _Send and _Recv: the two ends of an edge that graph partitioning cut between devices (see
// graph/partition.h). They meet in the step's Rendezvous under the key
// CreateRendezvousKey({send_device, send_device_incarnation, recv_device, tensor_name, 0, 0})
// (root frame only: edges inside while loops are not cut). TensorFlow's names and attrs.
#include "framework/op_kernel.h"
#include "framework/rendezvous.h"
#include "framework/shape_inference.h"
#include "ops/register_all.h"

namespace dflow {
namespace {

// The key both ends compute from their attrs.
Status KeyFromAttrs(OpKernelConstruction* c, std::string* key) {
  RendezvousKey k;
  int64_t incarnation = 0;
  RETURN_IF_ERROR(c->GetAttr("send_device", &k.send_device));
  RETURN_IF_ERROR(c->GetAttr("send_device_incarnation", &incarnation));
  RETURN_IF_ERROR(c->GetAttr("recv_device", &k.recv_device));
  RETURN_IF_ERROR(c->GetAttr("tensor_name", &k.edge_name));
  k.send_device_incarnation = static_cast<uint64_t>(incarnation);
  *key = CreateRendezvousKey(k);
  return absl::OkStatus();
}

class SendOp : public OpKernel {
 public:
  explicit SendOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(KeyFromAttrs(c, &key_)); }

  // Runs even when its input is dead (the executor lets it): the deadness travels to the _Recv.
  void Compute(OpKernelContext* ctx) override {
    Rendezvous* r = ctx->step().rendezvous;
    OP_REQUIRES(ctx, r != nullptr, errors::Internal("_Send node '", name(), "' ran in a step without a rendezvous"));
    bool is_dead = ctx->input_is_dead(0);
    OP_REQUIRES_OK(ctx, r->Send(key_, is_dead ? Tensor() : ctx->input(0), is_dead));
  }

 private:
  std::string key_;
};

class RecvOp : public AsyncOpKernel {
 public:
  explicit RecvOp(OpKernelConstruction* c) : AsyncOpKernel(c) { c->SetStatus(KeyFromAttrs(c, &key_)); }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    Rendezvous* r = ctx->step().rendezvous;
    if (r == nullptr) {
      ctx->SetStatus(errors::Internal("_Recv node '", name(), "' ran in a step without a rendezvous"));
      done();
      return;
    }
    r->RecvAsync(key_, [this, ctx, done = std::move(done)](const Status& s, Tensor t, bool is_dead) {
      if (!s.ok()) {
        ctx->SetStatus(s);
      } else if (is_dead) {
        ctx->outputs()[0].is_dead = true;
      } else if (!t.IsInitialized() || t.dtype() != output_type(0)) {
        ctx->SetStatus(errors::Internal("_Recv node '", name(), "' expected a ", DTypeString(output_type(0)),
                                        " tensor for '", key_, "' but received ",
                                        t.IsInitialized() ? DTypeString(t.dtype()) : std::string("no tensor")));
      } else {
        ctx->set_output(0, std::move(t));
      }
      done();
    });
  }

 private:
  std::string key_;
};

}  // namespace

void RegisterSendRecvOps() {
  RegisterOp(OpDefBuilder("_Send")
                 .Input("tensor: T")
                 .Attr("T: type")
                 .Attr("tensor_name: string")
                 .Attr("send_device: string")
                 .Attr("send_device_incarnation: int")
                 .Attr("recv_device: string")
                 .Attr("client_terminated: bool = false")
                 .SetIsStateful()
                 .SetShapeFn(NoOutputs)
                 .Doc("Sends a tensor (or its deadness) to the _Recv with the same key in the step's rendezvous."));
  RegisterOp(OpDefBuilder("_Recv")
                 .Output("tensor: tensor_type")
                 .Attr("tensor_type: type")
                 .Attr("tensor_name: string")
                 .Attr("send_device: string")
                 .Attr("send_device_incarnation: int")
                 .Attr("recv_device: string")
                 .Attr("client_terminated: bool = false")
                 .SetIsStateful()
                 .SetShapeFn(UnknownShape)
                 .Doc("Receives the tensor its _Send put in the step's rendezvous; dead when it was sent dead."));
  RegisterKernel<SendOp>(KernelBuilder("_Send"));
  RegisterKernel<RecvOp>(KernelBuilder("_Recv"));
}

}  // namespace dflow
