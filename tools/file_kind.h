// What a path given to `dflow inspect` or `dflow run` is: `dflow inspect` lists GraphDefs and
// checkpoints, and names every other TensorFlow file it recognizes instead of failing to parse it
// as a GraphDef.
#pragma once

#include <string>

namespace dflow::tools {

enum class FileKind {
  kGraphDef,         // a binary GraphDef (or something unrecognized: parsing it says which)
  kTextGraphDef,     // a GraphDef in protobuf text format (tf.io.write_graph(as_text=True))
  kCheckpoint,       // a V2 checkpoint: prefix, PREFIX.index, PREFIX.data-*, or a directory with `checkpoint`
  kCheckpointState,  // a `checkpoint` state file
  kCheckpointV1,     // a V1 checkpoint: TensorFlow 1.x's single-file table format
  kSavedModel,       // a SavedModel directory, saved_model.pb or saved_model.pbtxt
  kMetaGraph,        // a MetaGraphDef (model.ckpt-N.meta), binary or text
  kEventFile,        // a TFRecord file of Event protos (events.out.tfevents.*)
  kTFRecord,         // any other TFRecord file, also GZIP- or ZLIB-compressed
  kCompressed,       // a GZIP or ZLIB stream that does not hold TFRecords
  kNpy,              // a NumPy .npy file
  kEventDirectory,   // a directory holding event files
  kDirectory,        // any other directory
};

struct FileIdentity {
  FileKind kind;
  std::string what;  // one line: what the file is and which command reads it
};

FileIdentity IdentifyFile(const std::string& path);

}  // namespace dflow::tools
