#include "tools/file_kind.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/crc32c.h"
#include "base/env.h"
#include "base/record_io.h"
#include "base/table.h"
#include "google/protobuf/text_format.h"
#include "ops/data/compressed_file.h"
#include "proto/checkpoint_state.pb.h"
#include "proto/event.pb.h"
#include "proto/graph.pb.h"
#include "tools/proto_wire.h"
#include "train/event_file_reader.h"

namespace dflow::tools {
namespace {

constexpr size_t kSniffBytes = 1 << 16;

std::string Basename(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// One top-level field of a binary protobuf message.
struct Field {
  int number = 0;
  int wire = 0;
  absl::string_view bytes;  // wire type 2
};

// The top-level fields of `s`; false when `s` is not a well-formed protobuf message.
bool ScanFields(absl::string_view s, std::vector<Field>* out) {
  while (!s.empty()) {
    WireField w;
    if (!ReadWireField(&s, &w) || w.number == 0 || w.number > (1u << 29)) return false;
    out->push_back(Field{static_cast<int>(w.number), w.wire, w.bytes});
  }
  return true;
}

bool IsOpName(absl::string_view s) {
  if (s.empty() || s.size() > 256) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isalnum(c) || c == '_' || c == '>'; });
}

// A SavedModel: saved_model_schema_version (1, varint) and meta_graphs (2, messages).
bool LooksLikeSavedModel(const std::vector<Field>& fields) {
  bool version = false, meta = false;
  for (const Field& f : fields) {
    if (f.number == 1 && f.wire == 0) version = true;
    else if (f.number == 2 && f.wire == 2) meta = true;
    else return false;
  }
  return meta && version;
}

// A MetaGraphDef rather than a GraphDef: saver_def (3) is a message where GraphDef's field 3 is
// a varint; object_graph_def/asset_file_def (6, 7) have no GraphDef counterpart; and its first
// field is a MetaInfoDef, whose field 2 is an OpList where a NodeDef's is an op name.
bool LooksLikeMetaGraph(const std::vector<Field>& fields) {
  bool graph = false;
  for (const Field& f : fields) {
    if (f.wire != 2 || f.number > 9) return false;
    if (f.number == 3 || f.number == 6 || f.number == 7) return true;
    if (f.number == 2) graph = true;
  }
  if (!graph) return false;
  for (const Field& f : fields) {
    if (f.number != 1) continue;
    std::vector<Field> inner;
    if (!ScanFields(f.bytes, &inner)) return false;
    for (const Field& g : inner) {
      if (g.number == 2) return g.wire != 2 || !IsOpName(g.bytes);
    }
    return true;  // every NodeDef has an op: a MetaInfoDef without stripped_op_list
  }
  return false;
}

bool LooksLikeText(absl::string_view head) {
  if (head.empty()) return false;
  for (unsigned char c : head) {
    if (c == 0 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f')) return false;
  }
  return true;
}

// The first field name of a protobuf text file (comments and blank lines skipped).
std::string FirstTextField(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && absl::ascii_isspace(text[i])) ++i;
    if (i < text.size() && text[i] == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    break;
  }
  size_t j = i;
  while (j < text.size() && (absl::ascii_isalnum(text[j]) || text[j] == '_')) ++j;
  return std::string(text.substr(i, j - i));
}

bool IsDataFileName(const std::string& path) {
  // PREFIX.data-00000-of-00001
  size_t at = path.rfind(".data-");
  if (at == std::string::npos) return false;
  absl::string_view rest = absl::string_view(path).substr(at + 6);
  return rest.size() == 14 && rest.substr(5, 4) == "-of-";
}

std::string DescribeEvents(const std::string& path) {
  auto reader = summary::EventFileReader::Open(path);
  if (!reader.ok()) return "an event file that cannot be read: " + reader.status().ToString();
  int64_t events = 0, graphs = 0, meta_graphs = 0, scalars = 0, histograms = 0, images = 0, audio = 0, tensors = 0,
          logs = 0;
  int64_t first_step = 0, last_step = 0;
  bool stepped = false;
  std::string version, error;
  proto::Event e;
  for (;;) {
    Status s = (*reader)->ReadNext(&e);
    if (absl::IsOutOfRange(s)) break;
    if (!s.ok()) {
      error = absl::StrCat("; then: ", s.ToString());
      break;
    }
    ++events;
    if (e.has_file_version()) version = e.file_version();
    if (e.has_graph_def()) ++graphs;
    if (e.has_meta_graph_def()) ++meta_graphs;
    if (e.has_session_log()) ++logs;
    if (e.has_summary()) {
      if (!stepped) first_step = e.step();
      stepped = true;
      first_step = std::min<int64_t>(first_step, e.step());
      last_step = std::max<int64_t>(last_step, e.step());
      for (const auto& v : e.summary().value()) {
        if (v.has_simple_value()) ++scalars;
        else if (v.has_histo()) ++histograms;
        else if (v.has_image()) ++images;
        else if (v.has_audio()) ++audio;
        else if (v.has_tensor()) ++tensors;
      }
    }
  }
  std::vector<std::string> parts;
  auto count = [&](int64_t n, const char* what) {
    if (n > 0) parts.push_back(absl::StrCat(n, " ", what, n == 1 ? "" : "s"));
  };
  count(scalars, "scalar value");
  count(histograms, "histogram");
  count(images, "image");
  count(audio, "audio clip");
  count(tensors, "tensor value");
  count(graphs, "graph");
  count(meta_graphs, "meta graph");
  count(logs, "session log");
  std::string steps = stepped ? absl::StrCat(", steps ", first_step, " to ", last_step) : "";
  return absl::StrCat("an event file (", version.empty() ? "TFRecord of Event protos" : version, "): ", events,
                      " events", steps, parts.empty() ? "" : ": ", absl::StrJoin(parts, ", "), error,
                      "; `dflow events` prints its scalars");
}

// The records of a TFRecord file; nullopt for a compressed file whose first record is not one.
std::optional<std::string> DescribeRecords(const std::string& path, const std::string& compression = "") {
  auto raw = Env::Default()->NewRandomAccessFile(path);
  if (!raw.ok()) return "a TFRecord file that cannot be opened: " + raw.status().ToString();
  auto file = data::NewInflatingFile(std::move(*raw), compression);
  if (!file.ok()) return std::nullopt;
  RecordReader reader(file->get());
  uint64_t offset = 0;
  int64_t records = 0;
  std::string record, error;
  for (;;) {
    Status s = reader.ReadRecord(&offset, &record);
    if (absl::IsOutOfRange(s)) break;
    if (!s.ok()) {
      if (records == 0 && !compression.empty()) return std::nullopt;
      error = absl::StrCat("; then: ", s.ToString());
      break;
    }
    ++records;
  }
  if (!compression.empty()) {
    return absl::StrCat("a ", compression, "-compressed TFRecord file: ", records, " records", error,
                        " (read with tf.data.TFRecordDataset(..., compression_type=\"", compression, "\"))");
  }
  return absl::StrCat("a TFRecord file: ", records, " records", error,
                      " (read with tf.data.TFRecordDataset or tf.io.tf_record_iterator)");
}

FileIdentity IdentifyDirectory(const std::string& path) {
  Env* env = Env::Default();
  if (env->FileExists(path + "/saved_model.pb") || env->FileExists(path + "/saved_model.pbtxt")) {
    return {FileKind::kSavedModel, "a SavedModel directory (saved_model.pb and variables/)"};
  }
  if (env->FileExists(path + "/checkpoint")) return {FileKind::kCheckpoint, "a directory of checkpoints"};
  std::vector<std::string> events, prefixes;
  if (auto children = env->GetChildren(path); children.ok()) {
    for (const std::string& c : *children) {
      if (absl::StrContains(c, "tfevents")) events.push_back(c);
      if (absl::EndsWith(c, ".index")) prefixes.push_back(JoinPath(path, c.substr(0, c.size() - 6)));
    }
  }
  std::sort(events.begin(), events.end());
  std::sort(prefixes.begin(), prefixes.end());
  if (!events.empty()) {
    return {FileKind::kEventDirectory,
            absl::StrCat("a directory of ", events.size(), " event file", events.size() == 1 ? "" : "s", " (",
                         absl::StrJoin(events, ", "), "); `dflow inspect` or `dflow events` one of them")};
  }
  if (!prefixes.empty()) {
    return {FileKind::kDirectory, absl::StrCat("a directory without a `checkpoint` state file; `dflow inspect` one of "
                                               "its checkpoints: ",
                                               absl::StrJoin(prefixes, ", "))};
  }
  return {FileKind::kDirectory,
          "a directory without a `checkpoint` state file, a SavedModel (saved_model.pb) or event files"};
}

}  // namespace

FileIdentity IdentifyFile(const std::string& path) {
  Env* env = Env::Default();
  if (env->IsDirectory(path)) return IdentifyDirectory(path);
  const std::string base = Basename(path);
  if (absl::EndsWith(path, ".index") || IsDataFileName(path) || env->FileExists(path + ".index")) {
    return {FileKind::kCheckpoint, "a V2 checkpoint"};
  }
  auto size = env->FileSize(path);
  auto file = env->NewRandomAccessFile(path);
  if (!size.ok() || !file.ok()) return {FileKind::kGraphDef, ""};  // reading it reports the problem
  std::string scratch(std::min<uint64_t>(*size, kSniffBytes), '\0');
  auto head_or = (*file)->Read(0, scratch.size(), scratch.data());
  if (!head_or.ok()) return {FileKind::kGraphDef, ""};
  const absl::string_view head = *head_or;
  if (head.size() >= 6 && std::memcmp(head.data(), "\x93NUMPY", 6) == 0) {
    return {FileKind::kNpy, "a NumPy .npy file (a value for `dflow run --feed NAME=@FILE`)"};
  }
  const bool gzip = head.size() >= 2 && static_cast<uint8_t>(head[0]) == 0x1f && static_cast<uint8_t>(head[1]) == 0x8b;
  const bool zlib = head.size() >= 2 && static_cast<uint8_t>(head[0]) == 0x78 &&
                    (static_cast<uint8_t>(head[0]) * 256 + static_cast<uint8_t>(head[1])) % 31 == 0;
  if (gzip || zlib) {
    const std::string kind = gzip ? "GZIP" : "ZLIB";
    if (std::optional<std::string> records = DescribeRecords(path, kind)) return {FileKind::kTFRecord, *records};
    return {FileKind::kCompressed, absl::StrCat("a ", kind, "-compressed file that does not hold TFRecords")};
  }
  if (*size >= 48) {
    char tail[8];
    auto t = (*file)->Read(*size - 8, 8, tail);
    uint64_t magic = 0;
    if (t.ok() && t->size() == 8) {
      for (int i = 7; i >= 0; --i) magic = (magic << 8) | static_cast<uint8_t>((*t)[i]);
    }
    if (magic == table::kTableMagicNumber) {
      return {FileKind::kCheckpointV1,
              "a V1 checkpoint (TensorFlow 1.x's single-file table format, tf.train.Saver(write_version=V1))"};
    }
  }
  if (head.size() >= 16) {
    uint64_t length = 0;
    for (int i = 7; i >= 0; --i) length = (length << 8) | static_cast<uint8_t>(head[i]);
    uint32_t masked = 0;
    for (int i = 11; i >= 8; --i) masked = (masked << 8) | static_cast<uint8_t>(head[i]);
    if (crc32c::Unmask(masked) == crc32c::Value(head.data(), 8)) {
      proto::Event e;
      if (length + 12 <= head.size() && e.ParseFromArray(head.data() + 12, static_cast<int>(length)) &&
          absl::StartsWith(e.file_version(), "brain.Event")) {
        return {FileKind::kEventFile, DescribeEvents(path)};
      }
      if (absl::StrContains(base, "tfevents")) return {FileKind::kEventFile, DescribeEvents(path)};
      return {FileKind::kTFRecord, *DescribeRecords(path)};
    }
  }
  if (LooksLikeText(head.substr(0, 4096))) {
    const std::string field = FirstTextField(head);
    if (field == "saved_model_schema_version" || field == "meta_graphs") {
      return {FileKind::kSavedModel, "a SavedModel in text format (saved_model.pbtxt)"};
    }
    if (field == "meta_info_def" || field == "graph_def" || field == "saver_def" || field == "collection_def" ||
        field == "signature_def") {
      return {FileKind::kMetaGraph, "a MetaGraphDef in text format"};
    }
    if (field == "model_checkpoint_path" || field == "all_model_checkpoint_paths") {
      return {FileKind::kCheckpointState, "a checkpoint state file"};
    }
    if (field == "node" || field == "versions" || field == "library" || field == "version") {
      return {FileKind::kTextGraphDef, "a GraphDef in text format"};
    }
  }
  if (*size <= (uint64_t{1} << 31)) {
    auto bytes = env->ReadFile(path, int64_t{1} << 31);
    std::vector<Field> fields;
    if (bytes.ok() && ScanFields(*bytes, &fields)) {
      if (LooksLikeSavedModel(fields)) return {FileKind::kSavedModel, "a SavedModel (saved_model.pb)"};
      if (LooksLikeMetaGraph(fields)) {
        return {FileKind::kMetaGraph, "a MetaGraphDef (tf.train.export_meta_graph; the Saver's model.ckpt-N.meta)"};
      }
    }
  }
  if (base == "checkpoint") return {FileKind::kCheckpointState, "a checkpoint state file"};
  return {FileKind::kGraphDef, ""};
}

}  // namespace dflow::tools
