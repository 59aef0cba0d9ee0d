#include "tools/saved_model_cmd.h"

#include <ostream>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/env.h"
#include "dflow/flags.h"
#include "dflow/saved_model.h"
#include "tools/feed_value.h"

namespace dflow::tools {
namespace {

constexpr char kRunUsage[] =
    "usage: dflow run SAVED_MODEL_DIR [--tag TAG[,TAG...]] [--signature KEY] [--input KEY=VALUE]...\n"
    "                 [--output KEY]...\n";

std::string InfoText(const proto::TensorInfo& info) {
  std::string shape;
  if (info.tensor_shape().unknown_rank()) {
    shape = "<unknown>";
  } else {
    std::vector<std::string> dims;
    for (const auto& d : info.tensor_shape().dim()) dims.push_back(d.size() < 0 ? "?" : absl::StrCat(d.size()));
    shape = absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
  }
  std::string name = info.name();
  if (info.has_coo_sparse()) name = absl::StrCat("sparse ", info.coo_sparse().values_tensor_name());
  return absl::StrCat(name, " ", PythonDTypeName(static_cast<DType>(info.dtype())), shape);
}

}  // namespace

bool IsSavedModelRun(const std::vector<std::string>& args) {
  // A flag only SavedModels take decides; else whether the first argument that is no flag (or a
  // flag's value) is a SavedModel directory.
  for (const std::string& a : args) {
    for (const char* flag : {"--signature", "--input", "--tag"}) {
      if (a == flag || absl::StartsWith(a, absl::StrCat(flag, "="))) return true;
    }
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.empty()) continue;
    if (a[0] == '-') {
      if (a.find('=') == std::string::npos) ++i;  // the flag's value
      continue;
    }
    return MaybeSavedModelDirectory(a);
  }
  return false;
}

int RunSavedModel(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  FlagSpec spec;
  spec.values = {"--input", "--signature", "--tag", "--output"};
  spec.aliases = {{"--feed", "--input"}, {"--tags", "--tag"}, {"--fetch", "--output"}};
  auto flags = ParsedFlags::Parse(args, spec);
  if (!flags.ok()) {
    err << "error: " << flags.status().message() << "\n" << kRunUsage;
    return 2;
  }
  auto inputs = flags->GetKeyValues("--input");
  if (!inputs.ok()) {
    err << "error: " << inputs.status().message() << "\n";
    return 2;
  }
  const std::vector<std::string>& positional = flags->positional();
  if (positional.size() > 1) {
    err << "error: unexpected argument '" << positional[1] << "'\n" << kRunUsage;
    return 2;
  }
  const std::string dir = positional.empty() ? "" : positional[0];
  const std::string signature = flags->GetString("--signature", kDefaultServingSignatureDefKey);
  const std::string tags = flags->GetString("--tag", kSavedModelTagServe);
  const std::vector<std::string> outputs = flags->GetAll("--output");
  auto fail = [&](const Status& s) {
    err << "error: " << s << "\n";
    return 1;
  };
  std::set<std::string> tag_set;
  for (absl::string_view t : absl::StrSplit(tags, ',', absl::SkipEmpty())) tag_set.insert(std::string(t));
  auto bundle = LoadSavedModel(SessionOptions(), RunOptions(), dir, tag_set);
  if (!bundle.ok()) return fail(bundle.status());
  auto sig = bundle->signatures.find(signature);
  if (sig == bundle->signatures.end()) {
    std::vector<std::string> keys;
    for (const auto& [k, s] : bundle->signatures) keys.push_back(k);
    return fail(errors::NotFound("The SavedModel has no signature '", signature, "'; its signatures: [",
                                 absl::StrJoin(keys, ", "), "]"));
  }
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& [key, text] : *inputs) {
    auto in = sig->second.inputs().find(key);
    if (in == sig->second.inputs().end()) {
      std::vector<std::string> keys;
      for (const auto& [k, s] : sig->second.inputs()) keys.push_back(k);
      std::sort(keys.begin(), keys.end());
      return fail(errors::NotFound("Signature '", signature, "' has no input '", key, "'; its inputs: [",
                                   absl::StrJoin(keys, ", "), "]"));
    }
    auto value = ParseFeedValue(text, static_cast<DType>(in->second.dtype()));
    if (!value.ok()) return fail(errors::Annotate(value.status(), absl::StrCat("--input ", key, ": ")));
    feeds.emplace_back(key, *value);
  }
  std::vector<std::string> keys;
  auto result = RunSignature(*bundle, signature, feeds, outputs, &keys);
  if (!result.ok()) return fail(result.status());
  for (size_t i = 0; i < keys.size(); ++i) out << keys[i] << " = " << (*result)[i] << "\n";
  return 0;
}

int InspectSavedModel(const std::string& path, std::ostream& out, std::ostream& err) {
  const std::string dir = Env::Default()->IsDirectory(path) ? path : DirName(path);
  auto sm = ReadSavedModel(dir);
  if (!sm.ok()) {
    err << "error: " << sm.status() << "\n";
    return 1;
  }
  for (const auto& m : sm->meta_graphs()) {
    out << "tag set [" << absl::StrJoin(m.meta_info_def().tags(), ", ") << "]: " << m.graph_def().node_size()
        << " nodes";
    if (!m.meta_info_def().tensorflow_version().empty())
      out << ", written by " << m.meta_info_def().tensorflow_version();
    out << "\n";
    std::vector<std::string> keys;
    for (const auto& [k, s] : m.signature_def()) keys.push_back(k);
    std::sort(keys.begin(), keys.end());
    for (const std::string& k : keys) {
      const proto::SignatureDef& s = m.signature_def().at(k);
      out << "  signature '" << k << "' (" << s.method_name() << ")\n";
      std::map<std::string, proto::TensorInfo> ins(s.inputs().begin(), s.inputs().end());
      std::map<std::string, proto::TensorInfo> outs(s.outputs().begin(), s.outputs().end());
      for (const auto& [ik, info] : ins) out << "    input  " << ik << ": " << InfoText(info) << "\n";
      for (const auto& [ok, info] : outs) out << "    output " << ok << ": " << InfoText(info) << "\n";
    }
  }
  return 0;
}

}  // namespace dflow::tools
