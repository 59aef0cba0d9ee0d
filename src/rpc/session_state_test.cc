// What remote sessions share and what they keep to themselves (TensorFlow's rule): variables and
// resources with a shared_name are shared by every client of a server; queues, dataset
// iterators and accumulators without a shared_name, and random generators, belong to the
// session that made them, and go away when it closes.
#include <fstream>
#include <memory>

#include "base/net.h"
#include "base/temp_dir.h"
#include "distributed/worker.h"
#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rpc/grpc_server.h"
#include "rpc/grpc_test_util.h"

namespace dflow::rpc {
namespace {

class SessionStateTest : public ::testing::Test {
 public:
  void SetUp() override {
    auto s = StartOneTaskServer();
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(s).value();
  }

  // A client of the server in "another process": its own graph, through the master's RPC.
  std::unique_ptr<ClientSession> Connect(const Scope& root) {
    SessionOptions so;
    so.target = server_->target();
    so.direct_to_local_master = false;
    return std::make_unique<ClientSession>(root, so);
  }

  std::string WriteLines(const std::string& name, const std::vector<std::string>& lines) {
    std::string path = dir_.path() + "/" + name;
    std::ofstream f(path);
    for (const std::string& l : lines) f << l << "\n";
    return path;
  }

  // The next line of the session's iterator (named the same in every client's graph).
  struct Reader {
    Reader(SessionStateTest* t, const std::string& path) {
      line = data::Dataset::TextLine(root, ops::Const(root, path)).MakeOneShotIterator().GetNext()[0];
      session = t->Connect(root);
    }
    StatusOr<std::string> Next() {
      auto r = session->Run({line});
      if (!r.ok()) return r.status();
      return (*r)[0].scalar<std::string>();
    }
    Scope root = Scope::NewRootScope();
    Output line;
    std::unique_ptr<ClientSession> session;
  };

  TempDir dir_;
  std::unique_ptr<GrpcServer> server_;
};

TEST_F(SessionStateTest, IteratorsOfTheSameNameReadEachTheirOwnFile) {
  std::string a = WriteLines("a.txt", {"a1", "a2", "a3"});
  std::string b = WriteLines("b.txt", {"b1", "b2", "b3"});
  auto reader_a = std::make_unique<Reader>(this, a);
  Reader reader_b(this, b);
  ASSERT_EQ(reader_a->line.name(), reader_b.line.name());  // the same node names in both graphs
  EXPECT_EQ(reader_a->Next().value_or("?"), "a1");
  EXPECT_EQ(reader_b.Next().value_or("?"), "b1");
  EXPECT_EQ(reader_a->Next().value_or("?"), "a2");
  EXPECT_EQ(reader_b.Next().value_or("?"), "b2");
  EXPECT_EQ(server_->worker()->num_session_states(), 2u);
  // A closes: its iterator goes with it, and a new session of the same graph starts afresh.
  reader_a.reset();
  EXPECT_EQ(server_->worker()->num_session_states(), 1u);
  Reader reader_c(this, a);
  auto first = reader_c.Next();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, "a1");
  EXPECT_EQ(reader_b.Next().value_or("?"), "b3");
  auto end = reader_b.Next();
  EXPECT_TRUE(absl::IsOutOfRange(end.status())) << end.status();
}

TEST_F(SessionStateTest, VariablesAndSharedNamesAreSharedTheRestIsPrivate) {
  struct Client {
    explicit Client(SessionStateTest* t) {
      v = Variable::Create(root.WithOpName("v"), {}, DT_FLOAT, init::Zeros());
      set = ops::Assign(root, v.ref(), ops::Const(root, 5.0f)).op();
      Output shared = ops::FIFOQueue(root.WithOpName("shared_q"), {DT_FLOAT}, {.shared_name = "jobwide"});
      Output mine = ops::FIFOQueue(root.WithOpName("private_q"), {DT_FLOAT});
      put_shared = ops::QueueEnqueue(root, shared, {ops::Const(root, 7.0f)});
      put_mine = ops::QueueEnqueue(root, mine, {ops::Const(root, 8.0f)});
      shared_size = ops::QueueSize(root, shared);
      my_size = ops::QueueSize(root, mine);
      // A random generator: each session's draws start from the seed.
      draw = ops::RandomUniform(root.WithOpName("draw"), ops::Const(root, std::vector<int32_t>{4}), DT_FLOAT, 7);
      session = t->Connect(root);
    }
    Scope root = Scope::NewRootScope();
    Variable v;
    Operation set, put_shared, put_mine;
    Output shared_size, my_size, draw;
    std::unique_ptr<ClientSession> session;
  };
  Client a(this), b(this);
  ASSERT_TRUE(a.root.ok()) << a.root.status();
  ASSERT_TRUE(a.session->Run({a.set}).ok());
  ASSERT_TRUE(a.session->Run({a.put_shared}).ok());
  ASSERT_TRUE(a.session->Run({a.put_mine}).ok());
  auto seen_by_b = b.session->Run({b.v.ref(), b.shared_size, b.my_size});
  ASSERT_TRUE(seen_by_b.ok()) << seen_by_b.status();
  EXPECT_EQ((*seen_by_b)[0].scalar<float>(), 5.0f);  // the variable is the same
  EXPECT_EQ((*seen_by_b)[1].scalar<int32_t>(), 1);   // so is the queue with a shared_name
  EXPECT_EQ((*seen_by_b)[2].scalar<int32_t>(), 0);   // not the one without
  auto seen_by_a = a.session->Run({a.my_size});
  ASSERT_TRUE(seen_by_a.ok());
  EXPECT_EQ((*seen_by_a)[0].scalar<int32_t>(), 1);
  // Each session's generator starts from its seed: b's first draw is a's first draw.
  auto draws_a = a.session->Run({a.draw});
  auto draws_b = b.session->Run({b.draw});
  ASSERT_TRUE(draws_a.ok() && draws_b.ok());
  for (int i = 0; i < 4; ++i) EXPECT_EQ((*draws_a)[0].flat<float>()[i], (*draws_b)[0].flat<float>()[i]) << i;
}

}  // namespace
}  // namespace dflow::rpc
