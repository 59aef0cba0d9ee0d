// The image op family.
#pragma once

namespace dflow {

void RegisterResizeOps();  // ResizeBilinear, ResizeNearestNeighbor and their *Grad kernels
void RegisterImageOps();   // all of the family

}  // namespace dflow
