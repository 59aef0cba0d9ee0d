#include "ops/image/image_ops.h"

namespace dflow {

void RegisterImageOps() { RegisterResizeOps(); }

}  // namespace dflow
