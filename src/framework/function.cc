#include "framework/function.h"

#include "base/notification.h"

namespace dflow {

Status InstantiatedFunction::Run(const Options& options, std::vector<Tensor> args, std::vector<Tensor>* rets) const {
  Notification done;
  Status status;
  RunAsync(options, std::move(args), [&](const Status& s, std::vector<Tensor> r) {
    status = s;
    if (rets != nullptr) *rets = std::move(r);
    done.Notify();
  });
  done.Wait();
  return status;
}

}  // namespace dflow
