// `dflow run --out`, successive --target steps, text GraphDefs, escaped strings, and `dflow inspect`
// naming the files that are not GraphDefs.
#include <sstream>

#include "base/env.h"
#include "base/record_io.h"
#include "base/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/data/compressed_file.h"
#include "proto/graph.pb.h"
#include "tensor/npy.h"
#include "tools/cli_test_util.h"
#include "tools/tensor_output.h"
#include "train/file_writer.h"

namespace dflow::tools {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

void Write(const std::string& path, const std::string& bytes) {
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(path, bytes).ok()) << path;
}

std::string Attr(const std::string& key, const std::string& value) {
  return "attr { key: '" + key + "' value { " + value + " } } ";
}

std::string IntConst(const std::string& name, int v) {
  return "node { name: '" + name + "' op: 'Const' " + Attr("dtype", "type: DT_INT32") +
         Attr("value", "tensor { dtype: DT_INT32 tensor_shape {} int_val: " + std::to_string(v) + " }") + "}\n";
}

// r = range(2000); s = a string constant with bytes that need escaping; v a variable with
// init (v = 0) and train (v += 1). Local sessions of a process share their variables, so each
// test that runs init or train names its variable.
std::string TextGraph(const std::string& var = "v") {
  return "# a GraphDef in text format\n" + IntConst("start", 0) + IntConst("limit", 2000) + IntConst("delta", 1) +
         IntConst("one", 1) + IntConst("zero", 0) +
         "node { name: 'r' op: 'Range' input: 'start' input: 'limit' input: 'delta' " + Attr("Tidx", "type: DT_INT32") +
         "}\n"
         "node { name: 's' op: 'Const' " +
         Attr("dtype", "type: DT_STRING") +
         Attr("value", "tensor { dtype: DT_STRING tensor_shape { dim { size: 2 } } "
                       "string_val: 'a\\000b\\n\\'' string_val: '\\377ok' }") +
         "}\n"
         "node { name: '" +
         var + "' op: 'VariableV2' " + Attr("dtype", "type: DT_INT32") + Attr("shape", "shape {}") +
         "}\n"
         "node { name: 'init' op: 'Assign' input: '" +
         var + "' input: 'zero' " + Attr("T", "type: DT_INT32") +
         "}\n"
         "node { name: 'train' op: 'AssignAdd' input: '" +
         var + "' input: 'one' " + Attr("T", "type: DT_INT32") + "}\n";
}

TEST(DflowRunOutTest, WritesTheWholeFetchAsNpyWhileStdoutIsAbbreviated) {
  TempDir dir;
  Write(dir.File("g.pbtxt"), TextGraph());
  Result r = Cmd({"run", dir.File("g.pbtxt"), "--fetch", "r", "--out", dir.File("r.npy")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("r = [0 1 2 ... 1997 1998 1999]"));
  auto t = ReadNpyFile(dir.File("r.npy"));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->dtype(), DT_INT32);
  ASSERT_EQ(t->shape(), TensorShape({2000}));
  for (int i = 0; i < 2000; ++i) ASSERT_EQ(t->data<int32_t>()[i], i);
}

TEST(DflowRunOutTest, StringsAreEscapedOnStdoutAndFixedWidthBytesInNpy) {
  TempDir dir;
  Write(dir.File("g.pbtxt"), TextGraph());
  Result r = Cmd({"run", dir.File("g.pbtxt"), "--fetch", "s", "--out", dir.File("s.npy")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "s = [b'a\\x00b\\n\\'' b'\\xffok']\n");
  std::string bytes = *Env::Default()->ReadFile(dir.File("s.npy"));
  EXPECT_THAT(bytes, HasSubstr("{'descr': '|S5', 'fortran_order': False, 'shape': (2,), }"));
  EXPECT_EQ(bytes.size() % 64, 10u % 64);  // 64-byte aligned header, then 2 x 5 bytes
  EXPECT_EQ(bytes.substr(bytes.size() - 10), std::string("a\0b\n'\xffok\0\0", 10));
}

TEST(DflowRunOutTest, SeveralFetchesGoToAnNpzArchive) {
  TempDir dir;
  Write(dir.File("g.pbtxt"), TextGraph());
  Result r = Cmd({"run", dir.File("g.pbtxt"), "--fetch", "r", "--fetch", "s", "--out", dir.File("r.npy")});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr(".npz"));
  r = Cmd({"run", dir.File("g.pbtxt"), "--fetch", "r", "--fetch", "s:0", "--out", dir.File("all.npz")});
  ASSERT_EQ(r.code, 0) << r.err;
  std::string zip = *Env::Default()->ReadFile(dir.File("all.npz"));
  EXPECT_EQ(zip.substr(0, 4), "PK\x03\x04");
  EXPECT_THAT(zip, HasSubstr("r.npy"));
  EXPECT_THAT(zip, HasSubstr("s:0.npy"));
  EXPECT_EQ(zip.substr(zip.size() - 22, 4), "PK\x05\x06");
  r = Cmd({"run", dir.File("g.pbtxt"), "--fetch", "r", "--fetch", "r", "--out", dir.File("twice.npz")});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("given twice"));
  r = Cmd({"run", dir.File("g.pbtxt"), "--fetch", "r", "--out", dir.File("r.txt")});
  EXPECT_EQ(r.code, 2);
}

TEST(DflowRunOutTest, TargetsRunAsSuccessiveStepsInOrder) {
  TempDir dir;
  Write(dir.File("g.pbtxt"), TextGraph());
  Result r = Cmd({"run", dir.File("g.pbtxt"), "--target", "init", "--target", "train", "--target", "train", "--fetch",
                  "v"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "v = 2\n");
  Write(dir.File("fresh.pbtxt"), TextGraph("fresh"));
  r = Cmd({"run", dir.File("fresh.pbtxt"), "--target", "train", "--target", "init", "--fetch", "fresh"});
  EXPECT_EQ(r.code, 1);  // train before init reads an uninitialized variable
  EXPECT_THAT(r.err, HasSubstr("--target train"));
}

TEST(DflowInspectTest, ReadsATextGraphDef) {
  TempDir dir;
  Write(dir.File("g.pbtxt"), TextGraph());
  Result r = Cmd({"inspect", dir.File("g.pbtxt")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("r  Range -> int32[2000]  inputs: start, limit, delta"));
  // A graph with an op dflow lacks is still listed, with a note.
  Write(dir.File("other.pbtxt"), "node { name: 'q' op: 'NoSuchOp' input: 'p' }\nnode { name: 'p' op: 'NoOp' }\n");
  r = Cmd({"inspect", dir.File("other.pbtxt")});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "2 nodes\nq  NoSuchOp  inputs: p\np  NoOp\n");
  EXPECT_THAT(r.err, HasSubstr("cannot run in dflow"));
  EXPECT_THAT(r.err, HasSubstr("NoSuchOp"));
}

std::string Field(int number, const std::string& bytes) {
  std::string out(1, static_cast<char>(number << 3 | 2));
  size_t n = bytes.size();
  do {
    out.push_back(static_cast<char>((n & 0x7f) | (n > 0x7f ? 0x80 : 0)));
    n >>= 7;
  } while (n > 0);
  return out + bytes;
}

TEST(DflowInspectTest, NamesFilesThatAreNotGraphDefs) {
  TempDir dir;
  std::string graph = *Env::Default()->ReadFile(Data("rust_addition.pb"));
  // A MetaGraphDef: meta_info_def {meta_graph_version, stripped_op_list}, graph_def, saver_def.
  std::string meta = Field(1, Field(1, "v1") + Field(2, Field(1, Field(1, "Add")))) + Field(2, graph) +
                     Field(3, Field(1, "save/Const:0"));
  Write(dir.File("model.ckpt-3.meta"), meta);
  Write(dir.File("renamed"), meta);
  Write(dir.File("saved_model.pb"), std::string("\x08\x01", 2) + Field(2, meta));
  ASSERT_TRUE(Env::Default()->CreateDirs(dir.File("sm")).ok());
  Write(dir.File("sm/saved_model.pb"), std::string("\x08\x01", 2) + Field(2, meta));
  {
    auto f = Env::Default()->NewWritableFile(dir.File("data.tfrecord"));
    ASSERT_TRUE(f.ok());
    RecordWriter w(f->get());
    for (const char* rec : {"a", "bc", "def"}) ASSERT_TRUE(w.WriteRecord(rec).ok());
    ASSERT_TRUE((*f)->Close().ok());
  }
  for (const char* kind : {"GZIP", "ZLIB"}) {
    auto f = data::NewDeflatingFile(Env::Default()->NewWritableFile(dir.File(kind)).value(), kind);
    ASSERT_TRUE(f.ok());
    RecordWriter w(f->get());
    for (const char* rec : {"a", "bc"}) ASSERT_TRUE(w.WriteRecord(rec).ok());
    ASSERT_TRUE((*f)->Close().ok());
  }
  {
    auto f = data::NewDeflatingFile(Env::Default()->NewWritableFile(dir.File("text.gz")).value(), "GZIP");
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Append("just some text, not records").ok());
    ASSERT_TRUE((*f)->Close().ok());
  }
  std::string events;
  {
    summary::FileWriter w(dir.File("logs"));
    ASSERT_TRUE(w.AddScalar("loss", 0.5, 1).ok());
    ASSERT_TRUE(w.AddScalar("loss", 0.25, 9).ok());
    ASSERT_TRUE(w.Close().ok());
    events = w.path();
  }
  Write(dir.File("x.npy"), *SerializeNpy(Tensor::FromValues<float>({1, 2}, TensorShape{2}).value()));
  Write(dir.File("junk"), "\x93 this is not anything");
  ASSERT_TRUE(Env::Default()->CreateDirs(dir.File("empty")).ok());
  struct Case {
    std::string path, says;
    int code;
  } cases[] = {
      {dir.File("model.ckpt-3.meta"), "a MetaGraphDef", 0},
      {dir.File("renamed"), "a MetaGraphDef", 0},
      {dir.File("saved_model.pb"), "a SavedModel", 0},
      {dir.File("sm"), "a SavedModel directory", 0},
      {dir.File("data.tfrecord"), "a TFRecord file: 3 records", 0},
      {events, "an event file (brain.Event:2): 3 events, steps 1 to 9: 2 scalar values", 0},
      {dir.File("logs"), "a directory of 1 event file", 0},
      {dir.File("x.npy"), "a NumPy .npy file", 0},
      {dir.File("GZIP"), "a GZIP-compressed TFRecord file: 2 records", 0},
      {dir.File("ZLIB"), "a ZLIB-compressed TFRecord file: 2 records", 0},
      {dir.File("text.gz"), "a GZIP-compressed file that does not hold TFRecords", 1},
      {dir.File("junk"), "is not a file dflow recognizes", 1},
      {dir.File("logs/.."), "a SavedModel directory", 0},
      {dir.File("empty"), "a directory without a `checkpoint` state file", 1},
  };
  for (const Case& c : cases) {
    Result r = Cmd({"inspect", c.path});
    EXPECT_EQ(r.code, c.code) << c.path << ": " << r.out << r.err;
    EXPECT_THAT(r.out + r.err, HasSubstr(c.says)) << c.path;
    EXPECT_THAT(r.out + r.err, Not(HasSubstr("Could not parse"))) << c.path;
  }
  Result r = Cmd({"run", dir.File("model.ckpt-3.meta"), "--fetch", "z"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("is a MetaGraphDef"));
  EXPECT_THAT(r.err, HasSubstr("not a GraphDef"));
}

TEST(DflowInspectTest, NamesTheStalePathOfACheckpointStateFile) {
  TempDir dir;
  Write(dir.File("checkpoint"),
        "model_checkpoint_path: \"model.ckpt-7\"\nall_model_checkpoint_paths: \"model.ckpt-7\"\n");
  for (const std::string& path : {dir.path(), dir.File("checkpoint")}) {
    Result r = Cmd({"inspect", path});
    EXPECT_EQ(r.code, 1);
    EXPECT_THAT(r.err, HasSubstr(dir.File("model.ckpt-7")));
    EXPECT_THAT(r.err, HasSubstr("does not exist"));
  }
  // A state file whose latest checkpoint exists but which names a deleted older one.
  for (const char* suffix : {".index", ".data-00000-of-00001"}) {
    Write(dir.File(std::string("model.ckpt-9") + suffix),
          *Env::Default()->ReadFile(Data(std::string("checkpoint_v2_regression/model") + suffix)));
  }
  Write(dir.File("checkpoint"),
        "model_checkpoint_path: \"model.ckpt-9\"\nall_model_checkpoint_paths: \"model.ckpt-7\"\n"
        "all_model_checkpoint_paths: \"model.ckpt-9\"\n");
  Result r = Cmd({"inspect", dir.path()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("W  float32 []  = 0.21396178\n"));
  EXPECT_THAT(r.err, HasSubstr("model.ckpt-7, which does not exist"));
  r = Cmd({"inspect", dir.File("model.ckpt-9.data-00000-of-00001")});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("b  float32 []  = 1.0495254\n"));
}

TEST(TensorOutputTest, BytesLiteralEscapesEverythingUnprintable) {
  EXPECT_EQ(BytesLiteral("abc"), "b'abc'");
  EXPECT_EQ(BytesLiteral(std::string("\0\t\r\n\\'\"\x7f\x80", 9)), "b'\\x00\\t\\r\\n\\\\\\'\"\\x7f\\x80'");
  EXPECT_EQ(PrintableTensor(Tensor(std::string("x\ny"))), "b'x\\ny'");
  EXPECT_EQ(PrintableTensor(Tensor::FromValues<float>({1.5f}, TensorShape{1}).value()), "[1.5]");
}

}  // namespace
}  // namespace dflow::tools
