// ResourceHandle: the element of a DT_RESOURCE tensor — a reference to state held by a device's
// ResourceMgr (a resource variable, a queue, a mutex, a stack), by container and name.
#pragma once

#include <memory>
#include <string>

namespace dflow {

struct ResourceHandle {
  std::string device;  // full device name that holds the resource
  std::string container;
  std::string name;
  std::string type_name;  // what kind of resource ("Var", "FIFOQueue", ...), for error messages
  // Extra state that travels with the handle inside one process (e.g. a held mutex lock, which
  // is released when the last copy of the handle goes away).
  std::shared_ptr<void> payload;

  std::string DebugString() const {
    return "<" + type_name + " " + (container.empty() ? std::string() : container + "/") + name + ">";
  }
};

}  // namespace dflow
