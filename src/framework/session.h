// Session (the interface, its options and NewSession: include/dflow/session_interface.h) and the
// factories that implement targets, registered by InitDflow.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "dflow/session_interface.h"
#include "framework/credentials.h"
#include "tensor/tensor.h"

namespace dflow {

class SessionFactory {
 public:
  virtual ~SessionFactory() = default;
  virtual bool AcceptsOptions(const SessionOptions& options) const = 0;
  virtual StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options) = 0;
};

// Thread-safe. `name` is for error messages.
void RegisterSessionFactory(std::string name, std::unique_ptr<SessionFactory> factory);

}  // namespace dflow
