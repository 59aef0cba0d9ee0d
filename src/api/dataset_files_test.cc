// Datasets that read files: TextLineDataset, TFRecordDataset, CSVDataset (the Iris files
// included) and DecodeCSV, with their errors naming the file and line or record.
#include <fstream>

#include "absl/strings/str_split.h"
#include "base/env.h"
#include "base/record_io.h"
#include "base/temp_dir.h"
#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow::data {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Msg(const Status& s) { return std::string(s.message()); }

void WriteFile(const std::string& path, const std::string& contents) {
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(path, contents).ok());
}

struct Drained {
  std::vector<std::vector<Tensor>> elements;
  Status end;  // what stopped it: OutOfRange at the end, or an error
};

Drained Drain(const Scope& root, const Dataset& ds) {
  Element next = ds.MakeOneShotIterator().GetNext();
  Drained d;
  if (!root.ok()) {
    d.end = root.status();
    return d;
  }
  ClientSession session(root);
  while (d.elements.size() < 100000) {
    auto r = session.Run(next.components);
    if (!r.ok()) {
      d.end = r.status();
      break;
    }
    d.elements.push_back(*r);
  }
  return d;
}

std::vector<std::string> Strings(const Drained& d) {
  std::vector<std::string> out;
  for (const auto& e : d.elements) out.push_back(e[0].scalar<std::string>());
  return out;
}

TEST(DatasetFilesTest, TextLinesOfSeveralFiles) {
  TempDir dir;
  std::string a = JoinPath(dir.path(), "a.txt"), b = JoinPath(dir.path(), "b.txt");
  WriteFile(a, "first\r\nsecond\n\nfourth");  // CRLF, an empty line, no final newline
  WriteFile(b, "x\n");
  Scope root = Scope::NewRootScope();
  Drained d = Drain(root, Dataset::TextLine(root, Input({a, b})));
  EXPECT_TRUE(absl::IsOutOfRange(d.end)) << d.end;
  EXPECT_THAT(Strings(d), ElementsAre("first", "second", "", "fourth", "x"));
}

TEST(DatasetFilesTest, TextLinesLongerThanTheBuffer) {
  TempDir dir;
  std::string path = JoinPath(dir.path(), "long.txt");
  std::string l1(5000, 'a'), l2(3000, 'b');
  WriteFile(path, l1 + "\n" + l2 + "\n");
  Scope root = Scope::NewRootScope();
  Drained d = Drain(root, Dataset::TextLine(root, path));
  EXPECT_THAT(Strings(d), ElementsAre(l1, l2));
}

TEST(DatasetFilesTest, AMissingFileIsNotFound) {
  Scope root = Scope::NewRootScope();
  Drained d = Drain(root, Dataset::TextLine(root, "/nonexistent/dflow/file.txt"));
  EXPECT_TRUE(absl::IsNotFound(d.end)) << d.end;
  EXPECT_THAT(Msg(d.end), HasSubstr("/nonexistent/dflow/file.txt"));
}

void WriteRecords(const std::string& path, const std::vector<std::string>& records) {
  auto f = Env::Default()->NewWritableFile(path);
  ASSERT_TRUE(f.ok());
  RecordWriter w(f->get());
  for (const auto& r : records) ASSERT_TRUE(w.WriteRecord(r).ok());
  ASSERT_TRUE((*f)->Close().ok());
}

TEST(DatasetFilesTest, TFRecordsInOrder) {
  TempDir dir;
  std::string a = JoinPath(dir.path(), "a.tfrecord"), b = JoinPath(dir.path(), "b.tfrecord");
  WriteRecords(a, {"one", "", std::string(100000, 'z')});
  WriteRecords(b, {"four"});
  Scope root = Scope::NewRootScope();
  Drained d = Drain(root, Dataset::TFRecord(root, Input({a, b})));
  EXPECT_TRUE(absl::IsOutOfRange(d.end)) << d.end;
  EXPECT_THAT(Strings(d), ElementsAre("one", "", std::string(100000, 'z'), "four"));
}

TEST(DatasetFilesTest, ReadsTheTFRecordFileTensorFlowWrote) {
  Scope root = Scope::NewRootScope();
  Drained d = Drain(root,
                    Dataset::TFRecord(root, std::string(DFLOW_SOURCE_DIR) + "/testdata/tf/rust_expected.tfrecord"));
  EXPECT_TRUE(absl::IsOutOfRange(d.end)) << d.end;
  EXPECT_FALSE(d.elements.empty());
}

TEST(DatasetFilesTest, ATruncatedRecordIsDataLossNamingFileAndOffset) {
  TempDir dir;
  std::string path = JoinPath(dir.path(), "cut.tfrecord");
  WriteRecords(path, {"hello", "world!"});
  auto whole = Env::Default()->ReadFile(path);
  ASSERT_TRUE(whole.ok());
  WriteFile(path, whole->substr(0, whole->size() - 3));  // the second record loses its footer
  Scope root = Scope::NewRootScope();
  Drained d = Drain(root, Dataset::TFRecord(root, path));
  ASSERT_EQ(d.elements.size(), 1u);
  EXPECT_EQ(d.elements[0][0].scalar<std::string>(), "hello");
  EXPECT_TRUE(absl::IsDataLoss(d.end)) << d.end;
  EXPECT_THAT(Msg(d.end), HasSubstr(path));
  EXPECT_THAT(Msg(d.end), HasSubstr("21"));  // the offset of the second record: 12 + 5 + 4
}

std::string IrisPath(const char* file) { return std::string(DFLOW_SOURCE_DIR) + "/data/iris/" + file; }

TEST(DatasetFilesTest, TheIrisTrainingFileReads) {
  Scope root = Scope::NewRootScope();
  CsvOptions o;
  o.header = true;
  o.column_names = {"SepalLength", "SepalWidth", "PetalLength", "PetalWidth", "Species"};
  Dataset ds = Dataset::Csv(root, IrisPath("iris_training.csv"), {0.0f, 0.0f, 0.0f, 0.0f, 0}, o);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_THAT(ds.output_types(), ElementsAre(DT_FLOAT, DT_FLOAT, DT_FLOAT, DT_FLOAT, DT_INT32));
  Drained d = Drain(root, ds);
  EXPECT_TRUE(absl::IsOutOfRange(d.end)) << d.end;
  ASSERT_EQ(d.elements.size(), 120u);  // the header says 120 rows
  // The first data line: 6.4,2.8,5.6,2.2,2
  EXPECT_EQ(d.elements[0][0].scalar<float>(), 6.4f);
  EXPECT_EQ(d.elements[0][1].scalar<float>(), 2.8f);
  EXPECT_EQ(d.elements[0][2].scalar<float>(), 5.6f);
  EXPECT_EQ(d.elements[0][3].scalar<float>(), 2.2f);
  EXPECT_EQ(d.elements[0][4].scalar<int32_t>(), 2);
  // Against a naive parse of the same file.
  auto text = Env::Default()->ReadFile(IrisPath("iris_training.csv"));
  ASSERT_TRUE(text.ok());
  std::vector<std::string> lines = absl::StrSplit(*text, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 121u);
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> f = absl::StrSplit(lines[i], ',');
    ASSERT_EQ(f.size(), 5u);
    for (int c = 0; c < 4; ++c) EXPECT_EQ(d.elements[i - 1][c].scalar<float>(), std::stof(f[c])) << "line " << i + 1;
    EXPECT_EQ(d.elements[i - 1][4].scalar<int32_t>(), std::stoi(f[4]));
  }
}

TEST(DatasetFilesTest, IrisAsNamedBatchesForAnEstimator) {
  Scope root = Scope::NewRootScope();
  CsvOptions o;
  o.header = true;
  o.column_names = {"SepalLength", "SepalWidth", "PetalLength", "PetalWidth", ""};
  Dataset ds = Dataset::Csv(root, IrisPath("iris_test.csv"), {0.0f, 0.0f, 0.0f, 0.0f, 0}, o).Batch(8);
  Element next = ds.MakeOneShotIterator().GetNext();
  ASSERT_TRUE(root.ok()) << root.status();
  std::map<std::string, Output> features = next.Named();
  std::vector<Output> labels = next.Unnamed();
  ASSERT_EQ(features.size(), 4u);
  ASSERT_EQ(labels.size(), 1u);
  EXPECT_EQ(labels[0].shape(), PartialTensorShape({-1}));
  ClientSession session(root);
  std::vector<int64_t> sizes;
  while (true) {
    auto r = session.Run({features["PetalWidth"], labels[0]});
    if (!r.ok()) break;
    sizes.push_back((*r)[1].NumElements());
  }
  EXPECT_THAT(sizes, ElementsAre(8, 8, 8, 6));  // 30 rows
}

TEST(DatasetFilesTest, CsvErrorsNameTheFileAndLine) {
  TempDir dir;
  std::string path = JoinPath(dir.path(), "bad.csv");
  WriteFile(path, "a,b\n1,2.5\n3,oops\n");
  Scope root = Scope::NewRootScope();
  CsvOptions o;
  o.header = true;
  Drained d = Drain(root, Dataset::Csv(root, path, {0, 0.0f}, o));
  ASSERT_EQ(d.elements.size(), 1u);
  EXPECT_TRUE(absl::IsInvalidArgument(d.end)) << d.end;
  EXPECT_THAT(Msg(d.end), HasSubstr(path + ":3: Field 1 is not a valid float: oops"));

  WriteFile(path, "1,2\n3\n");
  Scope root2 = Scope::NewRootScope();
  d = Drain(root2, Dataset::Csv(root2, path, {0, 0}));
  EXPECT_THAT(Msg(d.end), HasSubstr(path + ":2: Expect 2 fields but have 1"));

  // A field without default is required.
  WriteFile(path, "1,\n");
  Scope root3 = Scope::NewRootScope();
  d = Drain(root3, Dataset::Csv(root3, path, {0, Tensor(DT_INT32, TensorShape{0})}));
  EXPECT_THAT(Msg(d.end), HasSubstr(path + ":1: Field 1 is required but missing!"));
}

TEST(DatasetFilesTest, BatchedCsvRowsAndErrors) {
  TempDir dir;
  std::string path = JoinPath(dir.path(), "b.csv");
  std::string text;
  for (int i = 0; i < 10; ++i) text += std::to_string(i) + "," + std::to_string(i) + ".5\n";
  WriteFile(path, text);
  for (bool drop : {false, true}) {
    Scope root = Scope::NewRootScope();
    Drained d = Drain(root, Dataset::Csv(root, path, {0, 0.0f}).Batch(4, drop));
    EXPECT_TRUE(absl::IsOutOfRange(d.end)) << d.end;
    ASSERT_EQ(d.elements.size(), drop ? 2u : 3u);
    EXPECT_THAT(d.elements[1][0].flat<int32_t>(), ElementsAre(4, 5, 6, 7));
    EXPECT_THAT(d.elements[1][1].flat<float>(), ElementsAre(4.5f, 5.5f, 6.5f, 7.5f));
    if (!drop) EXPECT_THAT(d.elements[2][0].flat<int32_t>(), ElementsAre(8, 9));
  }
  WriteFile(path, "1,2\n3,4\n5,x\n");
  Scope root = Scope::NewRootScope();
  Drained d = Drain(root, Dataset::Csv(root, path, {0, 0}).Batch(2));
  ASSERT_EQ(d.elements.size(), 1u);
  EXPECT_THAT(Msg(d.end), HasSubstr(path + ":3: Field 1 is not a valid int32: x"));
}

TEST(DatasetFilesTest, CsvDefaultsQuotesNaValueAndSelectedColumns) {
  TempDir dir;
  std::string path = JoinPath(dir.path(), "q.csv");
  WriteFile(path, "1;\"a;b\";x;NA\n;\"say \"\"hi\"\"\";y;2.5\n");
  Scope root = Scope::NewRootScope();
  CsvOptions o;
  o.field_delim = ";";
  o.na_value = "NA";
  Drained d = Drain(root, Dataset::Csv(root, path, {int64_t{7}, std::string("?"), std::string("?"), 9.0}, o));
  ASSERT_EQ(d.elements.size(), 2u) << d.end;
  EXPECT_EQ(d.elements[0][0].scalar<int64_t>(), 1);
  EXPECT_EQ(d.elements[0][1].scalar<std::string>(), "a;b");
  EXPECT_EQ(d.elements[0][3].scalar<double>(), 9.0);  // NA takes the default
  EXPECT_EQ(d.elements[1][0].scalar<int64_t>(), 7);   // empty takes the default
  EXPECT_EQ(d.elements[1][1].scalar<std::string>(), "say \"hi\"");
  EXPECT_EQ(d.elements[1][3].scalar<double>(), 2.5);

  Scope root2 = Scope::NewRootScope();
  o.select_cols = {1, 3};
  d = Drain(root2, Dataset::Csv(root2, path, {std::string(""), 0.0}, o));
  ASSERT_EQ(d.elements.size(), 2u) << d.end;
  EXPECT_EQ(d.elements[1][0].scalar<std::string>(), "say \"hi\"");
  EXPECT_EQ(d.elements[1][1].scalar<double>(), 2.5);
}

TEST(DatasetFilesTest, DecodeCsvOnATensorOfRecords) {
  Scope root = Scope::NewRootScope();
  std::vector<Output> cols = DecodeCsv(root, Input({"1,2.5,a", "3,,b"}), {0, 1.0f, std::string()});
  ASSERT_TRUE(root.ok()) << root.status();
  ASSERT_EQ(cols.size(), 3u);
  ClientSession session(root);
  auto r = session.Run(cols);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT((*r)[0].flat<int32_t>(), ElementsAre(1, 3));
  EXPECT_THAT((*r)[1].flat<float>(), ElementsAre(2.5f, 1.0f));
  EXPECT_EQ((*r)[2].flat<std::string>()[1], "b");

  Scope bad = Scope::NewRootScope();
  std::vector<Output> c2 = DecodeCsv(bad, Input({"1,2", "x,3"}), {0, 0});
  ClientSession s2(bad);
  Status s = s2.Run(c2).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(Msg(s), HasSubstr("Field 0 in record 1 is not a valid int32: x"));
  Scope quotes = Scope::NewRootScope();
  std::vector<Output> c3 = DecodeCsv(quotes, Input({"a\"b,1"}), {std::string(), 0});
  ClientSession s3(quotes);
  EXPECT_THAT(Msg(s3.Run(c3).status()), HasSubstr("Unquoted fields cannot have quotes"));
  Scope unterminated = Scope::NewRootScope();
  std::vector<Output> c4 = DecodeCsv(unterminated, Input({"\"ab,1"}), {std::string(), 0});
  ClientSession s4(unterminated);
  EXPECT_THAT(Msg(s4.Run(c4).status()), HasSubstr("Quoted field has to end with quote"));
}

}  // namespace
}  // namespace dflow::data
