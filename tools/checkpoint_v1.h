// `dflow inspect` on a V1 checkpoint: TensorFlow 1.x's single-file format (a table of
// SavedTensorSlices protos, written by tf.train.Saver(write_version=V1)). dflow restores V2
// checkpoints only; this lists what a V1 file holds so it can be converted.
#pragma once

#include <iosfwd>
#include <string>

namespace dflow::tools {

// Lists every tensor: name, dtype, shape, and the values of whole (unsliced) tensors of at most
// 16 elements. Exit code 1 with a DataLoss message when the file cannot be read.
int InspectCheckpointV1(const std::string& path, std::ostream& out, std::ostream& err);

}  // namespace dflow::tools
