// `dflow run DIR --signature KEY --input K=VALUE...` and `dflow inspect DIR` for SavedModel
// directories (saved_model.pb, variables/, assets/).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace dflow::tools {

// Whether `dflow run ARGS` names a SavedModel directory (its first non-flag argument).
bool IsSavedModelRun(const std::vector<std::string>& args);
// Loads the SavedModel (tags --tag, default "serve"), runs signature --signature (default
// "serving_default") with each --input KEY=VALUE fed to that input key, prints "KEY = value"
// for each --output KEY (every output, sorted, when none).
int RunSavedModel(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// Lists the SavedModel's tag sets and, for each, its signatures with their inputs and outputs
// (`path`: the directory, or its saved_model.pb / saved_model.pbtxt).
int InspectSavedModel(const std::string& path, std::ostream& out, std::ostream& err);

}  // namespace dflow::tools
