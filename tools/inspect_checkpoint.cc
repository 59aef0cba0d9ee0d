#include "tools/inspect_checkpoint.h"

#include <ostream>

#include "absl/strings/match.h"
#include "dflow/core.h"
#include "dflow/saver.h"
#include "tensor/tensor_bundle.h"
#include "tensor/tensor_proto.h"

namespace dflow::tools {
namespace {

constexpr int64_t kMaxPrintedElements = 16;

std::string Prefix(const std::string& path) {
  if (absl::EndsWith(path, ".index")) return path.substr(0, path.size() - 6);
  if (Env::Default()->IsDirectory(path)) {
    auto latest = train::LatestCheckpoint(path);
    if (latest.ok()) return *latest;
  }
  return path;
}

}  // namespace

bool LooksLikeCheckpoint(const std::string& path) {
  return absl::EndsWith(path, ".index") || Env::Default()->FileExists(BundleIndexFilename(path)) ||
         Env::Default()->IsDirectory(path);
}

int InspectCheckpoint(const std::string& path, std::ostream& out, std::ostream& err) {
  const std::string prefix = Prefix(path);
  auto reader = BundleReader::Open(Env::Default(), prefix);
  if (!reader.ok()) {
    err << "error: " << reader.status() << "\n";
    return 1;
  }
  const std::vector<std::string> names = (*reader)->TensorNames();
  out << "checkpoint " << prefix << ": " << names.size() << " tensors in " << (*reader)->num_shards()
      << " data file" << ((*reader)->num_shards() == 1 ? "" : "s") << "\n";
  int code = 0;
  for (const std::string& name : names) {
    auto entry = (*reader)->GetEntry(name);
    auto shape = ShapeFromProto(entry->shape());
    const int dtype = entry->dtype();
    out << name << "  "
        << (IsValidDType(dtype) ? PythonDTypeName(static_cast<DType>(dtype)) : absl::StrCat("dtype ", dtype)) << " "
        << (shape.ok() ? shape->DebugString() : "<bad shape>");
    if (entry->slices_size() > 0) out << "  (" << entry->slices_size() << " slices)";
    auto value = (*reader)->Lookup(name);
    if (!value.ok()) {
      out << "\n";
      err << "error: " << value.status() << "\n";
      code = 1;
      continue;
    }
    if (value->NumElements() <= kMaxPrintedElements) out << "  = " << value->ToString();
    out << "\n";
  }
  return code;
}

}  // namespace dflow::tools
