// Functions of a graph: FunctionLibraryDefinition (the named FunctionDefs a Graph carries and
// GraphDef.library sends), and the conversions between a function body built as a Graph and
// TensorFlow's FunctionDef format.
//
// Functions are monomorphic: every type is fixed in the signature. At run time a function is a
// graph with an `_Arg` node per argument and a `_Retval` node per result.
//
// Thread-safety: a FunctionLibraryDefinition is built by one thread; copies share the immutable
// FunctionDefs, so a copy taken for a session may be read by many threads.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/status.h"

namespace dflow {
namespace proto {
class FunctionDef;
class FunctionDefLibrary;
class GraphDef;
}  // namespace proto

class Graph;
class Node;
struct NodeOut;

class FunctionLibraryDefinition {
 public:
  // Adds a function. OK when an identical function of that name is there already;
  // InvalidArgument when a different one is, or when the signature is malformed (no name, an
  // argument without a fixed type, a result without a `ret` entry).
  Status Add(const proto::FunctionDef& fdef);
  Status AddLibrary(const proto::FunctionDefLibrary& library);
  // nullptr when there is no such function.
  const proto::FunctionDef* Find(absl::string_view name) const;
  bool empty() const { return functions_.empty(); }
  size_t size() const { return functions_.size(); }
  // A name not used yet: `base`, `base_1`, ...
  std::string UniqueName(absl::string_view base) const;
  void ToProto(proto::FunctionDefLibrary* library) const;

 private:
  std::map<std::string, std::shared_ptr<const proto::FunctionDef>, std::less<>> functions_;
};

// Converts nodes of `body` into a FunctionDef named `name`: the outputs of the `args` nodes (one
// output each; their ops do not matter, typically Placeholders that gave the body its shapes)
// become the arguments "arg<i>", the tensors `rets` the results "output<i>", and every other
// node with keep[id] (all when `keep` is null) a node of the body. InvalidArgument when a kept
// node reads a node that is neither kept nor an argument.
Status GraphToFunctionDef(const Graph& body, const std::string& name, const std::vector<const Node*>& args,
                          const std::vector<NodeOut>& rets, proto::FunctionDef* fdef,
                          const std::vector<bool>* keep = nullptr);

// The GraphDef that runs `fdef`: an `_Arg` node named after each argument, the body nodes, and
// a `_Retval` node per result. InvalidArgument names the function and any reference to an
// unknown argument, node or output.
Status FunctionDefToGraphDef(const proto::FunctionDef& fdef, proto::GraphDef* def);

}  // namespace dflow
