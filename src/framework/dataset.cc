#include "framework/dataset.h"

namespace dflow {

Tensor DatasetToTensor(std::shared_ptr<const DatasetBase> dataset) {
  return Tensor(Variant{std::static_pointer_cast<const VariantValue>(std::move(dataset))});
}

StatusOr<std::shared_ptr<const DatasetBase>> DatasetFromTensor(const Tensor& t, absl::string_view what) {
  if (t.dtype() != DT_VARIANT || t.dims() != 0) {
    return errors::InvalidArgument(what, " must be a scalar variant tensor holding a dataset, not ",
                                   DTypeString(t.dtype()), " ", t.shape().DebugString());
  }
  const Variant& v = t.scalar<Variant>();
  if (v.get<DatasetBase>() == nullptr) {
    return errors::InvalidArgument(what, " holds ", v.DebugString(), ", not a dataset");
  }
  return std::static_pointer_cast<const DatasetBase>(v.value);
}

}  // namespace dflow
