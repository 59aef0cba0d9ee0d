// GraphDef import and export: TensorFlow's wire format for graphs, with our own .proto files
// (proto/graph.proto) that keep TensorFlow's field numbers, so graphs written by TensorFlow load.
//
// Import is defensive: it accepts hostile bytes and returns InvalidArgument naming the node
// and field for anything malformed (bad names, unknown ops or attrs, references to missing
// nodes, cycles, oversized tensors), never crashing.
#pragma once

#include <string>
#include "absl/strings/string_view.h"

#include "base/status.h"
#include "framework/attr_value.h"
#include "graph/graph.h"

namespace dflow {
namespace proto {
class AttrValue;
class GraphDef;
}  // namespace proto

// Parses serialized GraphDef bytes; InvalidArgument when they are not a GraphDef.
Status ParseGraphDef(absl::string_view bytes, proto::GraphDef* out);
// Reads and parses a binary GraphDef file (NotFound if missing).
Status ReadGraphDefFile(const std::string& path, proto::GraphDef* out);

// Adds every node of `def` to `graph`. NodeDefs may come in any order; attrs omitted in the file
// take the OpDef's defaults. A node whose name exists in `graph` already is an error; inputs may
// name nodes already in `graph` (so a tail exported with first_node_id can be imported back). On
// error,
// `graph` may hold some of the nodes: import into a fresh Graph when that matters.
Status ImportGraphDef(const proto::GraphDef& def, Graph* graph);

// Writes the nodes with id >= first_node_id (all by default), in id order, and the whole
// function library. Import adds the library's functions (an identical one again is fine).
void ExportGraphDef(const Graph& graph, proto::GraphDef* def, int first_node_id = 0);

// Converts one attr value. `declared_type` (from the OpDef, "" if unknown) decides the kind of an
// empty list.
Status AttrValueFromProto(const proto::AttrValue& p, const std::string& declared_type, AttrValue* out);
void AttrValueToProto(const AttrValue& v, proto::AttrValue* p);

}  // namespace dflow
