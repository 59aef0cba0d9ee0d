// NewVariableSaver (dflow/monitored_session.h): the default saver of a training session.
//
// A checkpoint "<prefix>-<step>" is one file "<prefix>-<step>.variables": TFRecord framing of
// a header record, then (name, TensorProto) record pairs. The state file "checkpoint" beside it
// is TensorFlow's CheckpointState text format, so tools that list checkpoints find them.
#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/scope_internal.h"
#include "base/env.h"
#include "base/record_io.h"
#include "dflow/monitored_session.h"
#include "dflow/ops.h"
#include "dflow/variable.h"
#include "proto/tensor.pb.h"
#include "tensor/tensor_proto.h"

namespace dflow::train {
namespace {

constexpr char kHeader[] = "dflow.variables.v1";
constexpr char kSuffix[] = ".variables";
constexpr char kStateFile[] = "checkpoint";

struct SavedVariable {
  std::string name;
  DType dtype;
  PartialTensorShape shape;
  Output read;
  Output value;  // the placeholder Restore feeds
};

// Env reports most I/O errors as Unavailable; here they must not look like a task that died
// (which a training session recovers from by retrying): the disk is not going to come back.
Status FileError(Status s) {
  if (absl::IsUnavailable(s)) return errors::FailedPrecondition(s.message());
  return s;
}

std::string Quote(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    r += c;
  }
  return r + "\"";
}

// The quoted value of a `key: "value"` line of the state file.
StatusOr<std::string> Unquote(absl::string_view v, const std::string& file) {
  if (v.size() < 2 || v.front() != '"' || v.back() != '"') {
    return errors::DataLoss("Checkpoint state file ", file, ": bad value ", v);
  }
  std::string r;
  for (size_t i = 1; i + 1 < v.size(); ++i) {
    if (v[i] == '\\' && i + 2 < v.size()) ++i;
    r += v[i];
  }
  return r;
}

struct State {
  std::string latest;
  std::vector<std::string> all;
};

// NotFound when there is no state file.
StatusOr<State> ReadState(const std::string& dir) {
  const std::string file = JoinPath(dir, kStateFile);
  StatusOr<std::string> read = Env::Default()->ReadFile(file, int64_t{1} << 24);
  RETURN_IF_ERROR(FileError(read.status()));
  const std::string& text = *read;
  State st;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    if (absl::ConsumePrefix(&line, "model_checkpoint_path:")) {
      ASSIGN_OR_RETURN(st.latest, Unquote(absl::StripAsciiWhitespace(line), file));
    } else if (absl::ConsumePrefix(&line, "all_model_checkpoint_paths:")) {
      ASSIGN_OR_RETURN(std::string p, Unquote(absl::StripAsciiWhitespace(line), file));
      st.all.push_back(std::move(p));
    }
    // Other fields (timestamps) are not needed here.
  }
  return st;
}

std::string InDir(const std::string& dir, const std::string& path) {
  return !path.empty() && path[0] == '/' ? path : JoinPath(dir, path);
}

class VariableSaver : public SaverInterface {
 public:
  VariableSaver(const Scope& scope, int max_to_keep) : max_to_keep_(max_to_keep) {
    Scope s = scope.NewSubScope("save");
    std::vector<Operation> assigns;
    const std::vector<Output> local = LocalVariables(scope);  // per-session state, not the model
    for (Node* n : scope.graph()->nodes()) {
      if (n->op() != "VariableV2" && n->op() != "Variable") continue;
      if (std::find(local.begin(), local.end(), Output(n, 0)) != local.end()) continue;
      const std::string id = std::to_string(vars_.size());
      SavedVariable v;
      v.name = n->name();
      Output ref(n, 0);
      v.dtype = BaseType(ref.dtype());
      v.shape = ref.shape();
      Scope own = ScopeAccess::ColocatedWith(s, n);
      v.read = ops::Identity(own.WithOpName("read_" + id), ref);
      v.value = ops::Placeholder(s.WithOpName("value_" + id), v.dtype, v.shape);
      Output assign = ops::Assign(own.WithOpName("restore_" + id), ref, v.value);
      if (!v.read.valid() || !v.value.valid() || !assign.valid()) return;
      assigns.push_back(assign.op());
      vars_.push_back(std::move(v));
    }
    restore_ = ops::Group(s.WithOpName("restore_all"), assigns);
  }

  StatusOr<std::string> Save(const ClientSession& session, const std::string& prefix, int64_t step) override {
    std::vector<Output> reads;
    for (const SavedVariable& v : vars_) reads.push_back(v.read);
    ASSIGN_OR_RETURN(std::vector<Tensor> values, session.Run(reads));
    std::string contents;
    auto append = [&](absl::string_view record) {
      absl::StrAppend(&contents, EncodeRecordHeader(record), record, EncodeRecordFooter(record));
    };
    append(kHeader);
    for (size_t i = 0; i < vars_.size(); ++i) {
      proto::TensorProto p;
      TensorToProto(values[i], &p);
      append(vars_[i].name);
      append(p.SerializeAsString());
    }
    const std::string path = absl::StrCat(prefix, "-", step);
    const std::string dir = DirName(prefix);
    Env* env = Env::Default();
    RETURN_IF_ERROR(FileError(env->CreateDirs(dir)));
    RETURN_IF_ERROR(FileError(env->WriteFileAtomic(path + kSuffix, contents)));
    // The state file last: until it names the new checkpoint, the previous one is the latest.
    StatusOr<State> st = ReadState(dir);
    State state = st.ok() ? *st : State();
    const std::string base = BaseName(path);
    state.all.erase(std::remove(state.all.begin(), state.all.end(), base), state.all.end());
    state.all.push_back(base);
    std::vector<std::string> removed;
    if (max_to_keep_ > 0) {
      while (state.all.size() > static_cast<size_t>(max_to_keep_)) {
        removed.push_back(state.all.front());
        state.all.erase(state.all.begin());
      }
    }
    state.latest = base;
    std::string text = absl::StrCat("model_checkpoint_path: ", Quote(state.latest), "\n");
    for (const std::string& p : state.all) absl::StrAppend(&text, "all_model_checkpoint_paths: ", Quote(p), "\n");
    RETURN_IF_ERROR(FileError(env->WriteFileAtomic(JoinPath(dir, kStateFile), text)));
    for (const std::string& p : removed) env->DeleteFile(InDir(dir, p) + kSuffix).IgnoreError();
    return path;
  }

  Status Restore(const ClientSession& session, const std::string& path) override {
    const std::string file = path + kSuffix;
    Env* env = Env::Default();
    StatusOr<std::unique_ptr<RandomAccessFile>> f = env->NewRandomAccessFile(file);
    RETURN_IF_ERROR(FileError(f.status()));
    RecordReader reader(f->get());
    uint64_t offset = 0;
    std::string record;
    RETURN_IF_ERROR(FileError(reader.ReadRecord(&offset, &record)));
    if (record != kHeader) return errors::DataLoss("Checkpoint ", file, " is not a dflow variables file");
    std::unordered_map<std::string, Tensor> saved;
    while (true) {
      std::string name;
      Status s = reader.ReadRecord(&offset, &name);
      if (absl::IsOutOfRange(s)) break;
      RETURN_IF_ERROR(FileError(s));
      const uint64_t at = offset;
      s = reader.ReadRecord(&offset, &record);
      if (absl::IsOutOfRange(s)) return errors::DataLoss("Checkpoint ", file, ": no value for ", name);
      RETURN_IF_ERROR(FileError(s));
      proto::TensorProto p;
      if (!p.ParseFromString(record)) {
        return errors::DataLoss("Checkpoint ", file, ": the value of ", name, " at offset ", at, " does not parse");
      }
      StatusOr<Tensor> t = TensorFromProto(p);
      if (!t.ok()) return errors::DataLoss("Checkpoint ", file, ": the value of ", name, ": ", t.status().message());
      saved[name] = std::move(t).value();
    }
    ClientSession::FeedDict feeds;
    for (const SavedVariable& v : vars_) {
      auto it = saved.find(v.name);
      if (it == saved.end()) return errors::NotFound("Key ", v.name, " not found in checkpoint ", path);
      if (it->second.dtype() != v.dtype || !v.shape.IsCompatibleWith(it->second.shape())) {
        return errors::InvalidArgument("Checkpoint ", path, " holds ", v.name, " as ", DTypeString(it->second.dtype()),
                                       it->second.shape().DebugString(), ", the graph has ", DTypeString(v.dtype),
                                       v.shape.DebugString());
      }
      feeds.emplace(v.value, it->second);
    }
    return session.Run(feeds, {}, {restore_}).status();
  }

  StatusOr<std::string> LatestCheckpoint(const std::string& dir) override {
    StatusOr<State> st = ReadState(dir);
    if (absl::IsNotFound(st.status())) return std::string();
    RETURN_IF_ERROR(st.status());
    if (st->latest.empty()) return std::string();
    std::string path = InDir(dir, st->latest);
    if (!Env::Default()->FileExists(path + kSuffix)) {
      return errors::NotFound("The checkpoint state file of ", dir, " names ", path, ", which does not exist");
    }
    return path;
  }

 private:
  int max_to_keep_;
  std::vector<SavedVariable> vars_;
  Operation restore_;
};

}  // namespace

std::shared_ptr<SaverInterface> NewVariableSaver(const Scope& scope, int max_to_keep) {
  return std::make_shared<VariableSaver>(scope, max_to_keep);
}

}  // namespace dflow::train
