// GraphDefs: reading, writing and importing TensorFlow's serialized graphs (proto/graph.proto),
// and running one without graph-building code.
//
//   DFLOW_ASSIGN_OR_RETURN(proto::GraphDef def, ReadGraphDef("model.pb"));
//   DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSessionFromGraphDef(def));
//   DFLOW_RETURN_IF_ERROR(session->Run({{"x", x}}, {"y"}, {}, &out));   // by tensor names
//
//   Scope root = Scope::NewRootScope();
//   DFLOW_RETURN_IF_ERROR(ImportGraphDef(root, def));   // its nodes join root's graph
//   DFLOW_ASSIGN_OR_RETURN(proto::GraphDef again, ExportGraphDef(root));
//
// proto::GraphDef is the generated message class of proto/graph.proto (this header includes
// it). Files are binary GraphDefs, as tf.io.write_graph(as_text=False) writes them.
#pragma once

#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "dflow/scope.h"
#include "dflow/session_interface.h"
#include "dflow/status.h"
#include "proto/graph.pb.h"

namespace dflow {

// Parses a binary GraphDef. InvalidArgument when the bytes are not one (or exceed protobuf's
// 2 GiB limit).
StatusOr<proto::GraphDef> GraphDefFromBytes(absl::string_view bytes);
// Reads a binary GraphDef file. NotFound when it is missing; InvalidArgument naming the file
// when its bytes are not a GraphDef.
StatusOr<proto::GraphDef> ReadGraphDef(const std::string& path);
// Writes `def` as a binary GraphDef to `path`, atomically (a reader sees the old file or the new
// one, never a part).
Status WriteGraphDef(const proto::GraphDef& def, const std::string& path);

// Adds the nodes and functions of `def` to the scope's graph, under their own names (not the
// scope's name scope). Every node is checked against its op's registration (attrs, inputs,
// types); errors name the node. A name the graph already uses is InvalidArgument. After an
// error the graph may hold some of def's nodes: import into a fresh Scope when that matters.
Status ImportGraphDef(const Scope& scope, const proto::GraphDef& def);
// The scope's whole graph (every node, with the function library), as a session receives it.
// The graph's build error (scope.status()) when an op of it could not be built.
StatusOr<proto::GraphDef> ExportGraphDef(const Scope& scope);

// A session for options.target (InitDflow is called first) created with `def`. Errors of
// NewSession and of Session::Create (an unknown op, a malformed node).
StatusOr<std::unique_ptr<Session>> NewSessionFromGraphDef(const proto::GraphDef& def,
                                                          const SessionOptions& options = SessionOptions());

}  // namespace dflow
