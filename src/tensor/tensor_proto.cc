#include "tensor/tensor_proto.h"

#include <cstring>
#include <string>

#include "proto/tensor.pb.h"
#include "proto/tensor_shape.pb.h"

namespace dflow {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "tensor_content is little-endian; a big-endian host would need byte swapping here");

// The bytes one element occupies in memory once allocated (strings: the std::string object).
int64_t InMemoryElementSize(DType t) {
  return t == DT_STRING ? static_cast<int64_t>(sizeof(std::string)) : static_cast<int64_t>(DTypeSize(t));
}

// The number of values the typed *_val field for `t` carries.
int TypedValueCount(const proto::TensorProto& p, DType t) {
  switch (t) {
    case DT_FLOAT: return p.float_val_size();
    case DT_DOUBLE: return p.double_val_size();
    case DT_INT32:
    case DT_UINT8: return p.int_val_size();
    case DT_INT64: return p.int64_val_size();
    case DT_BOOL: return p.bool_val_size();
    case DT_STRING: return p.string_val_size();
    default: return 0;
  }
}

// Fills `out` (n elements) from `vals`, repeating the last value; zeros when `vals` is empty.
template <typename T, typename Src, typename Conv>
void FillFrom(const Src& vals, int64_t n, T* out, Conv conv) {
  const int64_t given = vals.size();
  for (int64_t i = 0; i < given && i < n; ++i) out[i] = conv(vals.Get(static_cast<int>(i)));
  const T fill = given > 0 ? conv(vals.Get(given - 1)) : T();
  for (int64_t i = given; i < n; ++i) out[i] = fill;
}

void FillTyped(const proto::TensorProto& p, int64_t n, Tensor* t) {
  switch (t->dtype()) {
    case DT_FLOAT: FillFrom(p.float_val(), n, t->data<float>(), [](float v) { return v; }); break;
    case DT_DOUBLE: FillFrom(p.double_val(), n, t->data<double>(), [](double v) { return v; }); break;
    case DT_INT32: FillFrom(p.int_val(), n, t->data<int32_t>(), [](int32_t v) { return v; }); break;
    case DT_UINT8:
      // TensorFlow stores uint8 values in int_val and truncates them the same way.
      FillFrom(p.int_val(), n, t->data<uint8_t>(), [](int32_t v) { return static_cast<uint8_t>(v); });
      break;
    case DT_INT64: FillFrom(p.int64_val(), n, t->data<int64_t>(), [](int64_t v) { return v; }); break;
    case DT_BOOL: FillFrom(p.bool_val(), n, t->data<bool>(), [](bool v) { return v; }); break;
    case DT_STRING: FillFrom(p.string_val(), n, t->data<std::string>(), [](const std::string& v) { return v; }); break;
    default: break;
  }
}

}  // namespace

StatusOr<PartialTensorShape> PartialShapeFromProto(const proto::TensorShapeProto& p) {
  if (p.unknown_rank()) {
    if (p.dim_size() > 0) {
      return errors::InvalidArgument("TensorShapeProto has unknown_rank set but also ", p.dim_size(), " dimensions");
    }
    return PartialTensorShape::UnknownRank();
  }
  if (p.dim_size() > kMaxRank) {
    return errors::InvalidArgument("TensorShapeProto has rank ", p.dim_size(), ", above the maximum rank ", kMaxRank);
  }
  DimVector dims;
  for (int i = 0; i < p.dim_size(); ++i) {
    int64_t d = p.dim(i).size();
    if (d < -1) return errors::InvalidArgument("TensorShapeProto dimension ", i, " has invalid size ", d);
    dims.push_back(d);
  }
  return PartialTensorShape::FromDims(dims);
}

StatusOr<TensorShape> ShapeFromProto(const proto::TensorShapeProto& p) {
  if (p.unknown_rank()) return errors::InvalidArgument("TensorShapeProto has unknown rank; a known shape is needed");
  if (p.dim_size() > kMaxRank) {
    return errors::InvalidArgument("TensorShapeProto has rank ", p.dim_size(), ", above the maximum rank ", kMaxRank);
  }
  TensorShape s;
  for (int i = 0; i < p.dim_size(); ++i) {
    int64_t d = p.dim(i).size();
    if (d < 0) {
      return errors::InvalidArgument("TensorShapeProto dimension ", i, " has size ", d,
                                     "; a known, non-negative size is needed");
    }
    RETURN_IF_ERROR(s.AddDim(d));
  }
  return s;
}

void ShapeToProto(const PartialTensorShape& s, proto::TensorShapeProto* p) {
  p->Clear();
  if (s.unknown_rank()) {
    p->set_unknown_rank(true);
    return;
  }
  for (int64_t d : s.dim_sizes()) p->add_dim()->set_size(d < 0 ? -1 : d);
}

StatusOr<Tensor> TensorFromProto(const proto::TensorProto& p) {
  const int raw_dtype = static_cast<int>(p.dtype());
  if (!IsValidDType(raw_dtype) || raw_dtype == DT_RESOURCE || raw_dtype == DT_VARIANT) {
    return errors::InvalidArgument("TensorProto has unsupported dtype ", DTypeString(static_cast<DType>(raw_dtype)),
                                   " (enum value ", raw_dtype, ")");
  }
  const DType dtype = static_cast<DType>(raw_dtype);
  auto shape_or = ShapeFromProto(p.tensor_shape());
  if (!shape_or.ok()) return errors::Annotate(shape_or.status(), "TensorProto has a bad shape: ");
  const TensorShape& shape = *shape_or;
  const int64_t n = shape.num_elements();
  const int64_t elem = InMemoryElementSize(dtype);

  if (!p.tensor_content().empty()) {
    if (dtype == DT_STRING) {
      return errors::InvalidArgument("TensorProto of dtype string has tensor_content; strings go in string_val");
    }
    // n <= kMaxElements and elem <= 8, so the product fits in int64.
    const int64_t want = n * elem;
    if (static_cast<int64_t>(p.tensor_content().size()) != want) {
      return errors::InvalidArgument("TensorProto of dtype ", DTypeString(dtype), " and shape ", shape.DebugString(),
                                     " needs ", want, " bytes of tensor_content but has ", p.tensor_content().size());
    }
    // The bytes are really in the proto, so the allocation is bounded by the proto's own size.
    ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, shape));
    if (dtype == DT_BOOL) {
      // Normalize: a bool must hold 0 or 1, whatever byte the file has.
      const char* src = p.tensor_content().data();
      bool* dst = t.data<bool>();
      for (int64_t i = 0; i < n; ++i) dst[i] = src[i] != 0;
    } else if (want > 0) {
      std::memcpy(t.raw_data(), p.tensor_content().data(), static_cast<size_t>(want));
    }
    return t;
  }

  const int64_t given = TypedValueCount(p, dtype);
  if (given > n) {
    return errors::InvalidArgument("TensorProto of dtype ", DTypeString(dtype), " and shape ", shape.DebugString(),
                                   " has ", given, " values, more than its ", n, " elements");
  }
  if (given < n) {
    // The proto claims more values than it carries: bound what we allocate on its word.
    if (n > kMaxProtoTensorBytes / elem) {
      return errors::InvalidArgument("TensorProto of dtype ", DTypeString(dtype), " and shape ", shape.DebugString(),
                                     " would expand ", given, " values to more than ", kMaxProtoTensorBytes, " bytes");
    }
  }
  ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, shape));
  FillTyped(p, n, &t);
  return t;
}

void TensorToProto(const Tensor& t, proto::TensorProto* p) {
  p->Clear();
  p->set_dtype(static_cast<proto::DataType>(t.dtype()));
  if (!t.IsInitialized()) return;
  for (int64_t d : t.shape().dim_sizes()) p->mutable_tensor_shape()->add_dim()->set_size(d);
  if (t.dtype() == DT_STRING) {
    for (const std::string& s : t.flat<std::string>()) p->add_string_val(s);
    return;
  }
  // Handles and variants are meaningful only in their process: they travel as dtype and shape
  // only, and TensorFromProto rejects them.
  if (t.dtype() == DT_RESOURCE || t.dtype() == DT_VARIANT) return;
  const size_t bytes = t.TotalBytes();
  if (bytes > 0) p->set_tensor_content(static_cast<const char*>(t.raw_data()), bytes);
}

}  // namespace dflow
