// TensorFlow's compressed TFRecord files: compression_type "ZLIB" (a zlib stream) or "GZIP" (a
// gzip stream) around the whole file's bytes; "" is no compression.
#pragma once

#include <memory>
#include <string>

#include "base/env.h"
#include "base/status.h"

namespace dflow::data {

// OK for "", "ZLIB" and "GZIP"; InvalidArgument naming anything else.
Status CheckCompressionType(const std::string& compression_type);

// Reads the uncompressed bytes of `file` (returned as is for ""). Reads must come at
// non-decreasing offsets to be cheap (a record reader's do); an earlier offset inflates again
// from the start. A damaged stream is DataLoss naming the file.
StatusOr<std::unique_ptr<RandomAccessFile>> NewInflatingFile(std::unique_ptr<RandomAccessFile> file,
                                                             const std::string& compression_type);

// Appends compressed bytes to `file` (returned as is for ""). Flush ends a deflate block
// (Z_SYNC_FLUSH), so what was written so far can be read; Close finishes the stream.
StatusOr<std::unique_ptr<WritableFile>> NewDeflatingFile(std::unique_ptr<WritableFile> file,
                                                         const std::string& compression_type);

}  // namespace dflow::data
