#include "train/event_file_reader.h"

#include <cstring>

#include "base/record_io.h"
#include "proto/event.pb.h"

namespace dflow::summary {
namespace {

// Events are small (a summary, a graph); a larger length is damage, not data.
constexpr uint64_t kMaxEventBytes = uint64_t{256} << 20;

// The value of a one-element numeric TensorProto, as TensorFlow 2 writes scalars.
bool ScalarOfTensor(const proto::TensorProto& t, double* out, bool* single_precision) {
  *single_precision = t.dtype() == proto::DT_FLOAT;
  int64_t elements = 1;
  for (const auto& d : t.tensor_shape().dim()) elements *= d.size() == 1 ? 1 : 0;
  if (elements != 1) return false;
  auto from_content = [&](auto zero) {
    using T = decltype(zero);
    if (t.tensor_content().size() != sizeof(T)) return false;
    T v;
    std::memcpy(&v, t.tensor_content().data(), sizeof(T));
    *out = static_cast<double>(v);
    return true;
  };
  switch (t.dtype()) {
    case proto::DT_FLOAT:
      if (t.float_val_size() == 1) return *out = t.float_val(0), true;
      return from_content(float{});
    case proto::DT_DOUBLE:
      if (t.double_val_size() == 1) return *out = t.double_val(0), true;
      return from_content(double{});
    case proto::DT_INT32:
      if (t.int_val_size() == 1) return *out = t.int_val(0), true;
      return from_content(int32_t{});
    case proto::DT_INT64:
      if (t.int64_val_size() == 1) return *out = static_cast<double>(t.int64_val(0)), true;
      return from_content(int64_t{});
    default: return false;
  }
}

}  // namespace

StatusOr<std::unique_ptr<EventFileReader>> EventFileReader::Open(const std::string& path, Env* env) {
  if (env == nullptr) env = Env::Default();
  ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, env->NewRandomAccessFile(path));
  std::unique_ptr<EventFileReader> r(new EventFileReader());
  r->file_ = std::move(file);
  return r;
}

EventFileReader::EventFileReader() = default;
EventFileReader::~EventFileReader() = default;

const std::string& EventFileReader::path() const { return file_->path(); }

Status EventFileReader::ReadNext(proto::Event* event) {
  RecordReader reader(file_.get(), kMaxEventBytes);
  std::string record;
  uint64_t offset = offset_;
  RETURN_IF_ERROR(reader.ReadRecord(&offset, &record));
  if (!event->ParseFromString(record)) {
    return errors::DataLoss("Record at offset ", offset_, " in ", file_->path(), " is not an Event (", record.size(),
                            " bytes with valid checksums)");
  }
  offset_ = offset;
  return absl::OkStatus();
}

std::vector<ScalarEvent> ScalarsOfEvent(const proto::Event& event) {
  std::vector<ScalarEvent> out;
  if (!event.has_summary()) return out;
  for (const proto::Summary::Value& v : event.summary().value()) {
    double value = 0;
    bool single_precision = true;
    if (v.value_case() == proto::Summary::Value::kSimpleValue) {
      value = v.simple_value();
    } else if (v.value_case() != proto::Summary::Value::kTensor ||
               !ScalarOfTensor(v.tensor(), &value, &single_precision)) {
      continue;
    }
    out.push_back(ScalarEvent{v.tag(), event.step(), value, event.wall_time(), single_precision});
  }
  return out;
}

StatusOr<std::vector<ScalarEvent>> ReadScalars(const std::string& path, Env* env) {
  ASSIGN_OR_RETURN(std::unique_ptr<EventFileReader> reader, EventFileReader::Open(path, env));
  std::vector<ScalarEvent> out;
  proto::Event event;
  while (true) {
    Status s = reader->ReadNext(&event);
    if (absl::IsOutOfRange(s)) break;
    RETURN_IF_ERROR(s);
    for (ScalarEvent& e : ScalarsOfEvent(event)) out.push_back(std::move(e));
  }
  return out;
}

}  // namespace dflow::summary
