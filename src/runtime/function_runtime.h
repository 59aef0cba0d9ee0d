// The FunctionLibraryRuntime of the runtime layer: instantiates a function of a graph's library
// as an Executor over the function's body on one device, and runs it with the arguments in a
// CallFrame (the body's _Arg and _Retval nodes read and write it).
#pragma once

#include <memory>

#include "framework/device.h"
#include "framework/function.h"
#include "graph/function_library.h"

namespace dflow {

// A runtime over a copy of `library` on `device` (not owned; it must outlive the runtime and
// every function instantiated from it, as devices outlive sessions). Instantiated functions
// keep the runtime alive.
std::shared_ptr<FunctionLibraryRuntime> NewFunctionLibraryRuntime(Device* device,
                                                                  const FunctionLibraryDefinition& library);

}  // namespace dflow
