// Functions of a graph: FunctionLibraryDefinition (the named FunctionDefs a Graph carries and
// GraphDef.library sends), and the conversions between a function body built as a Graph and
// TensorFlow's FunctionDef format.
//
// A function body as a Graph has one `_Arg` node per argument (attr `index`) and one `_Retval`
// node per result; the FunctionDef names its arguments "arg<i>" and its results "output<i>".
// Functions are monomorphic: every type is fixed in the signature.
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

// Converts a body graph into a FunctionDef named `name`. _Arg indices must be 0..n-1 and _Retval
// indices 0..m-1, each once (InvalidArgument otherwise).
Status GraphToFunctionDef(const Graph& body, const std::string& name, proto::FunctionDef* fdef);

// The GraphDef that runs `fdef`: an `_Arg` node named after each argument, the body nodes, and
// a `_Retval` node per result. InvalidArgument names the function and any reference to an
// unknown argument, node or output.
Status FunctionDefToGraphDef(const proto::FunctionDef& fdef, proto::GraphDef* def);

}  // namespace dflow
