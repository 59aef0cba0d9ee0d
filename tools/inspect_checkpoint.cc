#include "tools/inspect_checkpoint.h"

#include <ostream>
#include <vector>

#include "absl/strings/match.h"
#include "dflow/core.h"
#include "dflow/saver.h"
#include "tensor/tensor_bundle.h"
#include "tensor/tensor_proto.h"
#include "tools/tensor_output.h"
#include "train/checkpoint_state.h"

namespace dflow::tools {
namespace {

constexpr int64_t kMaxPrintedElements = 16;

// The checkpoint prefix `path` means: PREFIX.index, PREFIX.data-*, the latest checkpoint of a
// directory or of a `checkpoint` state file (NotFound naming the stale path when the state file
// names one that is gone).
StatusOr<std::string> Prefix(const std::string& path, bool state_file, std::vector<std::string>* notes) {
  if (absl::EndsWith(path, ".index")) return path.substr(0, path.size() - 6);
  if (size_t at = path.rfind(".data-"); at != std::string::npos && !Env::Default()->FileExists(path + ".index")) {
    return path.substr(0, at);
  }
  std::string dir = path, name = "checkpoint";
  if (state_file) {
    size_t slash = path.find_last_of('/');
    dir = slash == std::string::npos ? "." : path.substr(0, slash);
    name = slash == std::string::npos ? path : path.substr(slash + 1);
  } else if (!Env::Default()->IsDirectory(path)) {
    return path;
  }
  if (auto state = train::ReadCheckpointState(Env::Default(), dir, name); state.ok()) {
    for (const std::string& p : state->all_model_checkpoint_paths()) {
      if (p != state->model_checkpoint_path() && !train::CheckpointExists(p)) {
        notes->push_back(absl::StrCat("note: ", JoinPath(dir, name), " also names ", p, ", which does not exist"));
      }
    }
  }
  return train::LatestCheckpoint(dir, name);
}

}  // namespace

bool LooksLikeCheckpoint(const std::string& path) {
  return absl::EndsWith(path, ".index") || Env::Default()->FileExists(BundleIndexFilename(path)) ||
         (path.rfind(".data-") != std::string::npos &&
          Env::Default()->FileExists(BundleIndexFilename(path.substr(0, path.rfind(".data-"))))) ||
         Env::Default()->IsDirectory(path);
}

int InspectCheckpoint(const std::string& path, std::ostream& out, std::ostream& err, bool state_file) {
  std::vector<std::string> notes;
  auto prefix_or = Prefix(path, state_file, &notes);
  if (!prefix_or.ok()) {
    err << "error: " << prefix_or.status() << "\n";
    return 1;
  }
  for (const std::string& note : notes) err << note << "\n";
  const std::string prefix = *prefix_or;
  auto reader = BundleReader::Open(Env::Default(), prefix);
  if (!reader.ok()) {
    err << "error: " << reader.status() << "\n";
    return 1;
  }
  const std::vector<std::string> names = (*reader)->TensorNames();
  out << "checkpoint " << prefix << ": " << names.size() << " tensors in " << (*reader)->num_shards() << " data file"
      << ((*reader)->num_shards() == 1 ? "" : "s") << "\n";
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
    if (value->NumElements() <= kMaxPrintedElements) out << "  = " << PrintableTensor(*value);
    out << "\n";
  }
  return code;
}

}  // namespace dflow::tools
