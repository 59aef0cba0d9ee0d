// Partitioners, PartitionedVariable (slicing, initial values, AsTensor) and EmbeddingLookup
// (mod and div against a naive reference, gradients, training).
#include "dflow/partitioned_variables.h"

#include <random>

#include "api/scope_internal.h"
#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "graph/graph.h"
#include "gtest/gtest.h"
#include "train/gradient_checker.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

std::vector<int64_t> Parts(const Partitioner& p, const TensorShape& shape, DType dtype = DT_FLOAT) {
  auto r = p(shape, dtype);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : std::vector<int64_t>{};
}

std::string PartitionError(const Partitioner& p, const TensorShape& shape) {
  Scope root = Scope::NewRootScope();
  PartitionedVariable v = PartitionedVariable::Create(root.WithOpName("v"), shape, DT_FLOAT, init::Zeros(), p);
  EXPECT_FALSE(v.valid());
  EXPECT_FALSE(root.ok());
  return std::string(root.status().message());
}

TEST(PartitionerTest, FixedSize) {
  EXPECT_EQ(Parts(FixedSizePartitioner(3), {10, 4}), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(Parts(FixedSizePartitioner(3, 1), {10, 4}), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(Parts(FixedSizePartitioner(3, -1), {10, 4}), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(Parts(FixedSizePartitioner(8), {5, 2}), (std::vector<int64_t>{5, 1}));  // no more shards than rows
  EXPECT_THAT(PartitionError(FixedSizePartitioner(0), {4, 2}),
              HasSubstr("FixedSizePartitioner: num_shards must be at least 1, got 0"));
  EXPECT_THAT(PartitionError(FixedSizePartitioner(2, 2), {4, 2}),
              HasSubstr("FixedSizePartitioner: axis 2 is out of range for a variable of shape [4,2] (rank 2)"));
  EXPECT_THAT(PartitionError(FixedSizePartitioner(2), {}), HasSubstr("a scalar cannot be partitioned"));
}

TEST(PartitionerTest, MinMax) {
  // 1024 x 1024 floats = 4 MiB = 16 slices of 256 KiB.
  EXPECT_EQ(Parts(MinMaxVariablePartitioner(100), {1024, 1024}), (std::vector<int64_t>{16, 1}));
  EXPECT_EQ(Parts(MinMaxVariablePartitioner(4), {1024, 1024}), (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(Parts(MinMaxVariablePartitioner(100, 1), {1024, 1024}, DT_DOUBLE), (std::vector<int64_t>{1, 32}));
  EXPECT_EQ(Parts(MinMaxVariablePartitioner(100), {10, 10}), (std::vector<int64_t>{1, 1}));  // 400 bytes
  EXPECT_EQ(Parts(MinMaxVariablePartitioner(100, 0, 100), {10, 10}), (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(Parts(MinMaxVariablePartitioner(100, 0, 100), {3, 10}), (std::vector<int64_t>{2, 1}));   // 120 bytes
  EXPECT_EQ(Parts(MinMaxVariablePartitioner(100, 0, 100), {2, 100}), (std::vector<int64_t>{2, 1}));  // at most rows
  EXPECT_EQ(Parts(MinMaxVariablePartitioner(100, 0, 100, 50), {10}, DT_STRING), (std::vector<int64_t>{5}));
  EXPECT_THAT(PartitionError(MinMaxVariablePartitioner(0), {4}), HasSubstr("max_partitions must be at least 1"));
  EXPECT_THAT(PartitionError(MinMaxVariablePartitioner(2, 0, 0), {4}), HasSubstr("min_slice_size must be positive"));
  EXPECT_THAT(PartitionError(MinMaxVariablePartitioner(2, 1), {4}), HasSubstr("axis 1 is out of range"));
}

TEST(PartitionerTest, BadAnswersAreRejected) {
  auto answer = [](std::vector<int64_t> parts) {
    return [parts](const TensorShape&, DType) -> StatusOr<std::vector<int64_t>> { return parts; };
  };
  EXPECT_THAT(PartitionError(answer({2}), {4, 2}),
              HasSubstr("returned 1 partition counts [2] for a variable of shape"));
  EXPECT_THAT(PartitionError(answer({0, 1}), {4, 2}), HasSubstr("returned 0 partitions for dimension 0"));
  EXPECT_THAT(PartitionError(answer({2, 2}), {4, 2}), HasSubstr("partitioned along one dimension only"));
  EXPECT_THAT(PartitionError(answer({5, 1}), {4, 2}), HasSubstr("Cannot create 5 partitions of dimension 0 of size 4"));
  EXPECT_THAT(PartitionError(nullptr, {4, 2}), HasSubstr("no partitioner given"));
}

TEST(PartitionedVariableTest, UnevenSlices) {
  Scope root = Scope::NewRootScope();
  PartitionedVariable v = CreatePartitionedVariable(root, "emb", {10, 3}, DT_FLOAT, init::Zeros(),
                                                    FixedSizePartitioner(3));
  ASSERT_TRUE(root.ok()) << root.status();
  ASSERT_EQ(v.num_partitions(), 3);
  EXPECT_EQ(v.name(), "emb");
  EXPECT_EQ(v.axis(), 0);
  const int64_t rows[] = {4, 3, 3}, offsets[] = {0, 4, 7};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(v.parts()[i].name(), absl::StrCat("emb/part_", i));
    EXPECT_EQ(v.parts()[i].ref().shape(), PartialTensorShape({rows[i], 3}));
    EXPECT_EQ(v.offset(i), offsets[i]);
  }
  // 7 columns in 4 pieces along axis 1: the first 7 % 4 = 3 pieces get 2 columns, the last 1.
  PartitionedVariable w = PartitionedVariable::Create(root.WithOpName("w"), {2, 7}, DT_FLOAT, init::Ones(),
                                                      FixedSizePartitioner(4, 1));
  ASSERT_EQ(w.num_partitions(), 4);
  EXPECT_EQ(w.axis(), 1);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(w.parts()[i].ref().shape(), PartialTensorShape({2, i < 3 ? 2 : 1}));
  // A partitioner that cuts nothing: one part_0.
  PartitionedVariable one = PartitionedVariable::Create(root, {5}, DT_FLOAT, init::Zeros(), FixedSizePartitioner(1));
  ASSERT_EQ(one.num_partitions(), 1);
  EXPECT_EQ(one.parts()[0].name(), "Variable/part_0");
  // Every part is trainable and initialized by GlobalVariablesInitializer.
  EXPECT_EQ(root.collections()->trainable_variables.size(), 8u);
  Operation init = GlobalVariablesInitializer(root);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({init}).ok());
  auto r = session.Run({w.AsTensor(root), v.AsTensor(root), one.AsTensor(root)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].shape(), TensorShape({2, 7}));
  for (float f : (*r)[0].flat<float>()) EXPECT_EQ(f, 1.0f);
  EXPECT_EQ((*r)[1].shape(), TensorShape({10, 3}));
  EXPECT_EQ((*r)[2].shape(), TensorShape({5}));
}

// The partitioned variable starts with the values of the unpartitioned one.
TEST(PartitionedVariableTest, AsTensorEqualsTheUnpartitionedValue) {
  Tensor table(DT_FLOAT, TensorShape({7, 3}));
  for (int i = 0; i < 21; ++i) table.flat<float>()[i] = 0.5f * static_cast<float>(i) - 3.0f;
  const std::vector<std::pair<std::string, init::Initializer>> inits = {{"uniform", init::RandomUniform(-2, 3, 7)},
                                                                        {"normal", init::RandomNormal(1, 2, 11)},
                                                                        {"truncated", init::TruncatedNormal(0, 1, 5)},
                                                                        {"glorot", init::GlorotUniform(3)},
                                                                        {"constant",
                                                                         init::Constant(Input::Initializer(table))},
                                                                        {"scalar", init::Constant(2.5)},
                                                                        {"ones", init::Ones()}};
  for (const auto& [what, initializer] : inits) {
    for (int axis : {0, 1}) {
      SCOPED_TRACE(what + " axis " + std::to_string(axis));
      Scope root = Scope::NewRootScope();
      Variable plain = Variable::Create(root.WithOpName("plain"), {7, 3}, DT_FLOAT, initializer);
      PartitionedVariable parted = PartitionedVariable::Create(root.WithOpName("parted"), {7, 3}, DT_FLOAT, initializer,
                                                               FixedSizePartitioner(axis ? 2 : 3, axis));
      Output whole = parted.AsTensor(root);
      ASSERT_TRUE(root.ok()) << root.status();
      ClientSession session(root);
      ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
      auto r = session.Run({plain.read(), whole});
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_EQ((*r)[1].shape(), TensorShape({7, 3}));
      for (int i = 0; i < 21; ++i) EXPECT_EQ((*r)[0].flat<float>()[i], (*r)[1].flat<float>()[i]) << i;
      if (what == "constant") EXPECT_EQ((*r)[1].flat<float>()[20], 7.0f);
    }
  }
}

// TensorFlow's mapping of an id to (shard, row), written out naively.
std::pair<int64_t, int64_t> NaiveShard(int64_t id, const std::vector<int64_t>& sizes, const std::string& strategy) {
  const int64_t n = static_cast<int64_t>(sizes.size());
  if (strategy == "mod") return {id % n, id / n};
  int64_t start = 0;
  for (int64_t p = 0; p < n; ++p) {
    if (id < start + sizes[p]) return {p, id - start};
    start += sizes[p];
  }
  return {-1, -1};
}

TEST(EmbeddingLookupTest, ModAndDivAgainstANaiveReference) {
  // Shards as the "div" layout makes them: 11 rows over 3 shards hold 4, 4, 3 rows; "mod" sends
  // 11 ids over 3 shards as 4, 4, 3 as well.
  const std::vector<int64_t> sizes = {4, 4, 3};
  const int64_t dim = 2;
  std::vector<Tensor> shards;
  for (size_t p = 0; p < sizes.size(); ++p) {
    Tensor t(DT_FLOAT, TensorShape({sizes[p], dim}));
    for (int64_t i = 0; i < t.NumElements(); ++i) t.flat<float>()[i] = 100.0f * (p + 1) + static_cast<float>(i);
    shards.push_back(t);
  }
  const std::vector<int64_t> ids = {10, 0, 3, 3, 7, 4, 8, 1, 9, 2, 6, 5};
  for (const std::string strategy : {"mod", "div"}) {
    for (DType id_type : {DT_INT32, DT_INT64}) {
      SCOPED_TRACE(strategy + " " + DTypeString(id_type));
      Scope root = Scope::NewRootScope();
      std::vector<Output> params;
      for (const Tensor& t : shards) params.push_back(ops::Const(root, t));
      Tensor id_tensor(id_type, TensorShape({3, 4}));
      for (size_t i = 0; i < ids.size(); ++i) {
        if (id_type == DT_INT32) id_tensor.flat<int32_t>()[i] = static_cast<int32_t>(ids[i]);
        else id_tensor.flat<int64_t>()[i] = ids[i];
      }
      Output looked = ops::EmbeddingLookup(root, params, ops::Const(root, id_tensor), strategy);
      ASSERT_TRUE(root.ok()) << root.status();
      EXPECT_EQ(looked.shape(), PartialTensorShape({3, 4, dim}));
      auto r = ClientSession(root).Run({looked});
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_EQ((*r)[0].shape(), TensorShape({3, 4, dim}));
      for (size_t i = 0; i < ids.size(); ++i) {
        auto [p, row] = NaiveShard(ids[i], sizes, strategy);
        for (int64_t j = 0; j < dim; ++j) {
          EXPECT_EQ((*r)[0].flat<float>()[i * dim + j], shards[p].flat<float>()[row * dim + j]) << "id " << ids[i];
        }
      }
    }
  }
}

TEST(EmbeddingLookupTest, DivOnAPartitionedVariableIsAGatherOfTheWhole) {
  Scope root = Scope::NewRootScope();
  PartitionedVariable emb = CreatePartitionedVariable(root, "emb", {11, 3}, DT_FLOAT, init::RandomUniform(-1, 1, 9),
                                                      FixedSizePartitioner(4));
  Output ids = ops::Const(root, {10, 0, 2, 3, 3, 9, 5, 7, 8, 1, 4, 6});
  Output div = ops::EmbeddingLookup(root, emb, ids, "div");
  Output mod = ops::EmbeddingLookup(root, emb, ids);
  Output gathered = ops::Gather(root, emb.AsTensor(root), ids);
  // Shards of unknown size take the dynamic path of "div".
  std::vector<Output> fed;
  for (int p = 0; p < 4; ++p) fed.push_back(ops::Placeholder(root, DT_FLOAT, PartialTensorShape({-1, -1})));
  Output dynamic = ops::EmbeddingLookup(root, fed, ids, "div");
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
  std::vector<Output> parts;
  for (const Variable& v : emb.parts()) parts.push_back(v.read());
  auto values = session.Run(parts);
  ASSERT_TRUE(values.ok());
  ClientSession::FeedDict feeds;
  for (int p = 0; p < 4; ++p) feeds.emplace(fed[p], (*values)[p]);
  auto r = session.Run(feeds, {div, gathered, mod, dynamic});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].shape(), TensorShape({12, 3}));
  for (int i = 0; i < 36; ++i) {
    EXPECT_EQ((*r)[0].flat<float>()[i], (*r)[1].flat<float>()[i]) << i;
    EXPECT_EQ((*r)[3].flat<float>()[i], (*r)[1].flat<float>()[i]) << i;
  }
  // "mod" reads other rows of the same shards: id 1 is row 0 of part_1.
  for (int j = 0; j < 3; ++j) EXPECT_EQ((*r)[2].flat<float>()[9 * 3 + j], (*values)[1].flat<float>()[j]);
}

TEST(EmbeddingLookupTest, OneShardAndErrors) {
  Scope root = Scope::NewRootScope();
  Output table = ops::Const(root, {{1.0f, 2.0f}, {3.0f, 4.0f}, {5.0f, 6.0f}});
  Output one = ops::EmbeddingLookup(root, {table}, {2, 0}, "div");
  ASSERT_TRUE(root.ok()) << root.status();
  auto r = ClientSession(root).Run({one});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ((*r)[0].shape(), TensorShape({2, 2}));
  EXPECT_THAT(std::vector<float>((*r)[0].flat<float>().begin(), (*r)[0].flat<float>().end()),
              ::testing::ElementsAre(5, 6, 1, 2));
  // An id outside the table fails when the graph runs.
  Output far = ops::EmbeddingLookup(root, {table, table}, {7});
  ASSERT_TRUE(root.ok());
  EXPECT_FALSE(ClientSession(root).Run({far}).ok());

  auto error = [](const std::function<void(const Scope&)>& build) {
    Scope s = Scope::NewRootScope();
    build(s);
    EXPECT_FALSE(s.ok());
    return std::string(s.status().message());
  };
  EXPECT_THAT(error([](const Scope& s) { ops::EmbeddingLookup(s, {ops::Const(s, {{1.0f}})}, {0.5f}); }),
              HasSubstr("EmbeddingLookup: ids must be int32 or int64, got float"));
  EXPECT_THAT(error([](const Scope& s) { ops::EmbeddingLookup(s, {ops::Const(s, {{1.0f}})}, {0}, "range"); }),
              HasSubstr("unrecognized partition strategy 'range' (expected \"mod\" or \"div\")"));
  EXPECT_THAT(error([](const Scope& s) { ops::EmbeddingLookup(s, std::vector<Output>{}, {0}); }),
              HasSubstr("params is empty"));
  EXPECT_THAT(error([](const Scope& s) { ops::EmbeddingLookup(s, {ops::Const(s, 1.0f)}, {0}); }),
              HasSubstr("is a scalar"));
  EXPECT_THAT(error([](const Scope& s) {
                ops::EmbeddingLookup(s, {ops::Const(s, {{1.0f}}), ops::Const(s, {{1.0f, 2.0f}})}, {0});
              }),
              HasSubstr("the shards' rows differ in shape"));
  EXPECT_THAT(error([](const Scope& s) {
                ops::EmbeddingLookup(s, {ops::Const(s, {{1.0f}}), ops::Const(s, {{1.0f}}), ops::Const(s, {{1.0f}})},
                                     {0}, "div");
                ops::EmbeddingLookup(s, {ops::Const(s, {{1.0f}}), ops::Const(s, Tensor(DT_FLOAT, TensorShape({0, 1})))},
                                     {0}, "div");
              }),
              HasSubstr("the \"div\" strategy needs at least one row per shard, but the 2 shards hold 1 rows"));
  EXPECT_THAT(error([](const Scope& s) {
                PartitionedVariable v = PartitionedVariable::Create(s, {2, 4}, DT_FLOAT, init::Zeros(),
                                                                    FixedSizePartitioner(2, 1));
                ops::EmbeddingLookup(s, v, {0});
              }),
              HasSubstr("is partitioned along axis 1; a lookup needs shards of rows (axis 0)"));
}

TEST(EmbeddingLookupTest, GradientsReachTheShards) {
  for (const std::string strategy : {"mod", "div"}) {
    SCOPED_TRACE(strategy);
    std::vector<Tensor> shards;
    for (int64_t rows : {3, 2, 2}) {
      Tensor t(DT_DOUBLE, TensorShape({rows, 2}));
      for (int64_t i = 0; i < t.NumElements(); ++i) t.flat<double>()[i] = 0.3 * static_cast<double>(i + rows) - 0.7;
      shards.push_back(t);
    }
    auto err = MaxGradientError(shards, [&](GraphBuilder* b, const std::vector<NodeOut>& xs) {
      Scope s = ScopeAccess::ForGraph(b->graph());
      std::vector<Output> params;
      for (const NodeOut& x : xs) params.push_back(Output(x.node, x.index));
      // Repeated ids (their gradients add up) and a row no id reaches (part of shard 2 or 1).
      Output ids = ops::Const(s, Tensor::FromValues<int64_t>({0, 4, 4, 1, 6, 3, 0, 2}, TensorShape({2, 4})).value());
      Output y = ops::EmbeddingLookup(s, params, ids, strategy);
      EXPECT_TRUE(s.ok()) << s.status();
      return std::vector<NodeOut>{y.valid() ? NodeOut{y.node(), y.index()} : NodeOut{}};
    });
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 1e-8);
  }
}

TEST(EmbeddingLookupTest, AnEmbeddingModelTrains) {
  Scope root = Scope::NewRootScope();
  root.SetRandomSeed(3);
  Scope s = root.WithDeviceFunction(train::ReplicaDeviceSetter(3, "/job:worker/task:0"));
  PartitionedVariable emb = CreatePartitionedVariable(s, "emb", {20, 4}, DT_FLOAT, init::RandomUniform(-0.5, 0.5, 1),
                                                      FixedSizePartitioner(3));
  Variable w = Variable::Create(s.WithOpName("w"), {4, 1}, DT_FLOAT, init::RandomUniform(-0.5, 0.5, 2));
  Output ids = ops::Placeholder(s.WithOpName("ids"), DT_INT64, PartialTensorShape({-1}));
  Output y = ops::Placeholder(s.WithOpName("y"), DT_FLOAT, PartialTensorShape({-1, 1}));
  Output pred = ops::MatMul(s, ops::EmbeddingLookup(s, emb, ids, "div"), w);
  Output loss = losses::MeanSquaredError(s, y, pred);
  Operation train_op = train::GradientDescentOptimizer(0.2f).Minimize(s, loss);
  Operation init = GlobalVariablesInitializer(s);
  ASSERT_TRUE(root.ok()) << root.status();
  // The shards went round robin over the ps tasks, the lookup's gathers with them.
  for (int p = 0; p < 3; ++p)
    EXPECT_EQ(emb.parts()[p].ref().node()->requested_device(), absl::StrCat("/job:ps/task:", p));
  EXPECT_EQ(w.ref().node()->requested_device(), "/job:ps/task:0");
  int gathers = 0;
  for (Node* n : root.graph()->nodes()) {
    if (n->op() != "GatherV2" || n->name().rfind("embedding_lookup/", 0) != 0) continue;
    EXPECT_EQ(n->requested_device(), n->data_inputs()[0]->src->requested_device()) << n->name();
    ++gathers;
  }
  EXPECT_EQ(gathers, 3);
  EXPECT_EQ(loss.node()->requested_device(), "/job:worker/task:0");

  SessionOptions so;
  so.allow_soft_placement = true;
  ClientSession session(root, so);
  ASSERT_TRUE(session.Run({init}).ok());
  auto before = session.Run({emb.AsTensor(root)});
  ASSERT_TRUE(before.ok());
  Tensor id_batch = Tensor::FromValues<int64_t>({0, 5, 7, 12, 19, 5}, TensorShape({6})).value();
  Tensor targets = Tensor::FromValues<float>({1, -1, 0.5f, 2, -0.5f, -1}, TensorShape({6, 1})).value();
  float first = 0, last = 0;
  for (int step = 0; step < 60; ++step) {
    auto r = session.Run({{ids, id_batch}, {y, targets}}, {loss}, {train_op});
    ASSERT_TRUE(r.ok()) << r.status();
    (step == 0 ? first : last) = (*r)[0].scalar<float>();
  }
  EXPECT_LT(last, first * 0.2f);
  // Rows that no id names did not move; the others did.
  auto after = session.Run({emb.AsTensor(root)});
  ASSERT_TRUE(after.ok());
  for (int row : {1, 6, 13, 18}) {
    for (int j = 0; j < 4; ++j)
      EXPECT_EQ((*after)[0].flat<float>()[row * 4 + j], (*before)[0].flat<float>()[row * 4 + j]);
  }
  bool moved = false;
  for (int j = 0; j < 4; ++j) moved |= (*after)[0].flat<float>()[12 * 4 + j] != (*before)[0].flat<float>()[12 * 4 + j];
  EXPECT_TRUE(moved);
}

}  // namespace
}  // namespace dflow
