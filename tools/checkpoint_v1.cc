#include "tools/checkpoint_v1.h"

#include <map>
#include <ostream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/env.h"
#include "base/table.h"
#include "proto/tensor.pb.h"
#include "proto/tensor_shape.pb.h"
#include "proto/tensor_slice.pb.h"
#include "tensor/tensor_proto.h"
#include "dflow/core.h"
#include "tools/proto_wire.h"
#include "tools/tensor_output.h"

namespace dflow::tools {
namespace {

constexpr int64_t kMaxPrintedElements = 16;

// Calls fn(field number, varint, bytes) for each field of a message; false when malformed.
template <typename Fn>
bool ForEachField(absl::string_view s, Fn fn) {
  while (!s.empty()) {
    WireField f;
    if (!ReadWireField(&s, &f)) return false;
    if (!fn(static_cast<int>(f.number), f.value, f.bytes)) return false;
  }
  return true;
}

// SavedSliceMeta: name = 1, shape = 2, type = 3, slice = 4.
struct TensorMeta {
  proto::TensorShapeProto shape;
  int dtype = 0;
  int slices = 0;
};

bool IsWhole(const proto::TensorSliceProto& slice) {
  for (const auto& e : slice.extent()) {
    if (e.has_length_case() == proto::TensorSliceProto::Extent::kLength) return false;
  }
  return true;
}

Status Bad(const std::string& path, const std::string& what) {
  return errors::DataLoss("V1 checkpoint ", path, ": ", what);
}

}  // namespace

int InspectCheckpointV1(const std::string& path, std::ostream& out, std::ostream& err) {
  auto fail = [&](const Status& s) {
    err << "error: " << s << "\n";
    return 1;
  };
  auto size = Env::Default()->FileSize(path);
  if (!size.ok()) return fail(size.status());
  auto file = Env::Default()->NewRandomAccessFile(path);
  if (!file.ok()) return fail(file.status());
  auto kvs = table::ReadTable(**file, *size);
  if (!kvs.ok()) return fail(kvs.status());
  std::map<std::string, TensorMeta> metas;
  std::map<std::string, Tensor> values;
  for (const auto& [key, value] : *kvs) {
    // SavedTensorSlices: meta = 1 (SavedTensorSliceMeta: tensor = 1), data = 2 (SavedSlice).
    bool ok = ForEachField(value, [&](int field, uint64_t, absl::string_view bytes) {
      if (field == 1 && key.empty()) {
        return ForEachField(bytes, [&](int f, uint64_t, absl::string_view tensor) {
          if (f != 1) return true;
          std::string name;
          TensorMeta m;
          bool good = ForEachField(tensor, [&](int g, uint64_t v, absl::string_view b) {
            if (g == 1) name = std::string(b);
            else if (g == 2) return m.shape.ParseFromArray(b.data(), static_cast<int>(b.size()));
            else if (g == 3) m.dtype = static_cast<int>(v);
            else if (g == 4) ++m.slices;
            return true;
          });
          if (good) metas[name] = m;
          return good;
        });
      }
      if (field == 2 && !key.empty()) {
        // SavedSlice: name = 1, slice = 2, data = 3 (a TensorProto of values only).
        std::string name;
        proto::TensorSliceProto slice;
        proto::TensorProto data;
        bool good = ForEachField(bytes, [&](int g, uint64_t, absl::string_view b) {
          if (g == 1) name = std::string(b);
          else if (g == 2) return slice.ParseFromArray(b.data(), static_cast<int>(b.size()));
          else if (g == 3) return data.ParseFromArray(b.data(), static_cast<int>(b.size()));
          return true;
        });
        if (!good) return false;
        auto m = metas.find(name);
        if (m != metas.end() && m->second.slices <= 1 && IsWhole(slice)) {
          data.set_dtype(static_cast<proto::DataType>(m->second.dtype));
          *data.mutable_tensor_shape() = m->second.shape;
          auto t = TensorFromProto(data);
          if (t.ok()) values[name] = *t;
        }
      }
      return true;
    });
    if (!ok) return fail(Bad(path, absl::StrCat("entry '", key, "' is not a SavedTensorSlices proto")));
  }
  if (metas.empty()) return fail(Bad(path, "no SavedTensorSliceMeta entry"));
  out << "V1 checkpoint " << path << " (TensorFlow 1.x's table format; dflow restores V2 checkpoints only: "
      << "re-save with tf.train.Saver() to convert): " << metas.size() << " tensors\n";
  for (const auto& [name, m] : metas) {
    auto shape = ShapeFromProto(m.shape);
    out << name << "  "
        << (IsValidDType(m.dtype) ? PythonDTypeName(static_cast<DType>(m.dtype)) : absl::StrCat("dtype ", m.dtype))
        << " " << (shape.ok() ? shape->DebugString() : "<bad shape>");
    if (m.slices > 1) out << "  (" << m.slices << " slices)";
    auto v = values.find(name);
    if (v != values.end() && v->second.NumElements() <= kMaxPrintedElements)
      out << "  = " << PrintableTensor(v->second);
    out << "\n";
  }
  return 0;
}

}  // namespace dflow::tools
