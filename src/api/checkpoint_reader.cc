// train::CheckpointReader (dflow/checkpoint_reader.h) over tensor/tensor_bundle.h's BundleReader.
#include "dflow/checkpoint_reader.h"

#include <algorithm>
#include <utility>

#include "base/env.h"
#include "tensor/tensor_bundle.h"

namespace dflow::train {

class CheckpointReader::Impl {
 public:
  std::unique_ptr<BundleReader> bundle;
};

CheckpointReader::CheckpointReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CheckpointReader::~CheckpointReader() = default;

StatusOr<std::unique_ptr<CheckpointReader>> CheckpointReader::Open(const std::string& prefix) {
  auto impl = std::make_unique<Impl>();
  ASSIGN_OR_RETURN(impl->bundle, BundleReader::Open(Env::Default(), prefix));
  return std::unique_ptr<CheckpointReader>(new CheckpointReader(std::move(impl)));
}

const std::string& CheckpointReader::prefix() const { return impl_->bundle->prefix(); }

StatusOr<std::vector<CheckpointVariable>> CheckpointReader::ListVariables() const {
  std::vector<CheckpointVariable> out;
  for (const std::string& name : impl_->bundle->TensorNames()) {
    ASSIGN_OR_RETURN(CheckpointVariable v, Describe(name));
    out.push_back(std::move(v));
  }
  return out;
}

bool CheckpointReader::Has(const std::string& name) const {
  // Contains also knows the entries of single slices; only whole variables count here.
  const std::vector<std::string> names = impl_->bundle->TensorNames();
  return std::binary_search(names.begin(), names.end(), name);
}

StatusOr<CheckpointVariable> CheckpointReader::Describe(const std::string& name) const {
  CheckpointVariable v;
  v.name = name;
  RETURN_IF_ERROR(impl_->bundle->GetDTypeAndShape(name, &v.dtype, &v.shape));
  return v;
}

StatusOr<Tensor> CheckpointReader::Read(const std::string& name) const { return impl_->bundle->Lookup(name); }

}  // namespace dflow::train
