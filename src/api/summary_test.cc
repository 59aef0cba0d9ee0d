// The summary API end to end: names and tags, the summaries collection, run-time errors of the
// kernels, and a training loop whose summaries a FileWriter writes and ReadScalars reads back.
#include "dflow/summary.h"

#include <cmath>
#include <limits>

#include "base/temp_dir.h"
#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "graph/graph.h"
#include "gtest/gtest.h"
#include "proto/event.pb.h"
#include "proto/graph.pb.h"
#include "proto/summary.pb.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

proto::Summary Parse(const Tensor& t) {
  proto::Summary s;
  EXPECT_EQ(t.dtype(), DT_STRING);
  EXPECT_TRUE(s.ParseFromString(t.scalar<std::string>()));
  return s;
}

TEST(SummaryApiTest, TagsAreTheScopedOpNames) {
  Scope root = Scope::NewRootScope();
  Output a = summary::Scalar(root, "loss", 0.5f);
  Output b = summary::Scalar(root, "loss", 2);  // made unique as TensorFlow does
  Output h = summary::Histogram(root.NewSubScope("layer1"), "weights", {1.0f, 2.0f, 2.0f});
  Output odd = summary::Scalar(root, "/acc uracy:1", 1.0);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(a.name(), "loss:0");
  EXPECT_EQ(b.name(), "loss_1:0");
  EXPECT_EQ(h.name(), "layer1/weights:0");
  EXPECT_EQ(odd.name(), "acc_uracy_1:0");
  EXPECT_EQ(a.op().type(), "ScalarSummary");
  EXPECT_EQ(h.op().type(), "HistogramSummary");
  EXPECT_EQ(summary::AllSummaries(root).size(), 4u);

  ClientSession session(root);
  auto out = session.Run({a, b, h, odd});
  ASSERT_TRUE(out.ok()) << out.status();
  proto::Summary sa = Parse((*out)[0]);
  ASSERT_EQ(sa.value_size(), 1);
  EXPECT_EQ(sa.value(0).tag(), "loss");
  EXPECT_EQ(sa.value(0).simple_value(), 0.5f);
  EXPECT_EQ(Parse((*out)[1]).value(0).tag(), "loss_1");
  EXPECT_EQ(Parse((*out)[1]).value(0).simple_value(), 2.0f);
  proto::Summary sh = Parse((*out)[2]);
  EXPECT_EQ(sh.value(0).tag(), "layer1/weights");
  EXPECT_EQ(sh.value(0).histo().num(), 3);
  EXPECT_EQ(sh.value(0).histo().sum(), 5);
  EXPECT_EQ(sh.value(0).histo().sum_squares(), 9);
  EXPECT_EQ(Parse((*out)[3]).value(0).tag(), "acc_uracy_1");
}

TEST(SummaryApiTest, MergeAllMergesTheCollection) {
  Scope root = Scope::NewRootScope();
  EXPECT_FALSE(summary::MergeAll(root).valid());  // nothing to merge: no op, no error
  EXPECT_TRUE(root.ok());
  Output x = ops::Placeholder(root, DT_FLOAT);
  summary::Scalar(root, "x", x);
  summary::Scalar(root.NewSubScope("twice"), "x", ops::Mul(root, x, 2.0f));
  Output merged = summary::MergeAll(root);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(merged.name(), "Merge/MergeSummary:0");
  ClientSession session(root);
  auto out = session.Run({{x, 1.5f}}, {merged});
  ASSERT_TRUE(out.ok()) << out.status();
  proto::Summary s = Parse((*out)[0]);
  ASSERT_EQ(s.value_size(), 2);
  EXPECT_EQ(s.value(0).tag(), "x");
  EXPECT_EQ(s.value(0).simple_value(), 1.5f);
  EXPECT_EQ(s.value(1).tag(), "twice/x");
  EXPECT_EQ(s.value(1).simple_value(), 3.0f);
}

TEST(SummaryApiTest, MergingATagTwiceFailsNamingIt) {
  Scope root = Scope::NewRootScope();
  Output a = summary::Scalar(root, "dup", 1.0f);
  Output m = summary::Merge(root, {a, a});
  ClientSession session(root);
  auto out = session.Run({m});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(out.status())) << out.status();
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("Duplicate tag dup found in summary inputs"));

  summary::Merge(root, {});
  EXPECT_TRUE(absl::IsInvalidArgument(root.status())) << root.status();
}

TEST(SummaryApiTest, KernelsCheckWhatTheGraphCouldNot) {
  Scope root = Scope::NewRootScope();
  Output v = ops::Placeholder(root, DT_FLOAT);  // shape unknown while building
  Output scalar = summary::Scalar(root, "s", v);
  Output hist = summary::Histogram(root, "h", v);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);

  Tensor three(DT_FLOAT, TensorShape({3}));
  auto out = session.Run({{v, three}}, {scalar});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("tags and values not the same shape: [] != [3] (tag 's')"));

  Tensor bad(DT_FLOAT, TensorShape({2}));
  bad.flat<float>()[1] = std::numeric_limits<float>::quiet_NaN();
  out = session.Run({{v, bad}}, {hist});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(out.status()));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("Nan in summary histogram for: h"));

  // Static shapes that differ are a build error.
  Scope other = Scope::NewRootScope();
  summary::Scalar(other, "v", {1.0f, 2.0f});
  EXPECT_TRUE(absl::IsInvalidArgument(other.status())) << other.status();
}

TEST(SummaryApiTest, TrainingLoopWritesAnEventFileThatReadsBack) {
  TempDir dir;
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_FLOAT, PartialTensorShape({}));
  Variable w = Variable::Create(root.WithOpName("w"), {}, DT_FLOAT, init::Constant(1.0f));
  Output loss = ops::Mul(root, ops::Sub(root, w.read(), x), ops::Sub(root, w.read(), x));
  summary::Scalar(root, "loss", loss);
  summary::Histogram(root, "w", w.read());
  Output merged = summary::MergeAll(root);
  Operation train = train::GradientDescentOptimizer(0.25f).Minimize(root, loss);
  Operation init = GlobalVariablesInitializer(root);
  ASSERT_TRUE(root.ok()) << root.status();

  ClientSession session(root);
  ASSERT_TRUE(session.Run({init}).ok());
  summary::FileWriter writer(dir.path(), {.flush_secs = 3600});
  ASSERT_TRUE(writer.AddGraph(*root.graph()).ok());
  // w starts at 1 and moves halfway to 3 each step: loss (w - 3)^2 = 4, 1, 0.25, 0.0625.
  for (int step = 0; step < 4; ++step) {
    auto out = session.Run({{x, 3.0f}}, {merged}, {train});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_TRUE(writer.AddSummary((*out)[0], step).ok());
  }
  ASSERT_TRUE(writer.Close().ok());

  auto scalars = summary::ReadScalars(writer.path());
  ASSERT_TRUE(scalars.ok()) << scalars.status();
  ASSERT_EQ(scalars->size(), 4u);
  const double want[] = {4, 1, 0.25, 0.0625};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ((*scalars)[i].tag, "loss");
    EXPECT_EQ((*scalars)[i].step, i);
    EXPECT_DOUBLE_EQ((*scalars)[i].value, want[i]);
  }
  // The graph event holds the graph itself.
  auto reader = summary::EventFileReader::Open(writer.path());
  ASSERT_TRUE(reader.ok());
  proto::Event e;
  ASSERT_TRUE((*reader)->ReadNext(&e).ok());
  EXPECT_EQ(e.file_version(), "brain.Event:2");
  ASSERT_TRUE((*reader)->ReadNext(&e).ok());
  proto::GraphDef def;
  ASSERT_TRUE(def.ParseFromString(e.graph_def()));
  EXPECT_EQ(def.node_size(), root.graph()->num_nodes());
  ASSERT_TRUE((*reader)->ReadNext(&e).ok());
  ASSERT_EQ(e.summary().value_size(), 2);
  EXPECT_EQ(e.summary().value(1).tag(), "w_1");        // "w" is the variable's name, as in TensorFlow
  EXPECT_EQ(e.summary().value(1).histo().sum(), 1.0);  // w before the first update
}

}  // namespace
}  // namespace dflow
