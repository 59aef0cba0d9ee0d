// The memory a master needs to take a big GraphDef (the measurement behind
// MasterOptions::max_graph_nodes; numbers in /work/notes/limits_perf.md). Disabled by default:
// it builds a 1,000,000-node graph and reads the process's peak RSS, so run it alone:
//   distributed_tests --gtest_also_run_disabled_tests --gtest_filter='*GraphImportMemory*'
#include <malloc.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "dflow/dflow.h"
#include "distributed/in_process_cluster.h"
#include "distributed/master.h"
#include "graph/graph_def.h"
#include "gtest/gtest.h"
#include "proto/graph.pb.h"
#include "proto/master.pb.h"

namespace dflow {
namespace {

// A field of /proc/self/status in bytes ("VmRSS", "VmHWM").
int64_t StatusBytes(const std::string& field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) * 1024;
  }
  return -1;
}

// Returns freed memory to the OS and makes the current RSS the peak, so that the next VmHWM
// is the peak of what follows.
int64_t ResetPeak() {
  malloc_trim(0);
  std::ofstream("/proc/self/clear_refs") << "5";
  return StatusBytes("VmRSS");
}

// A chain: n0 = Const, n<i> = Identity(n<i-1>): about 30 serialized bytes per node.
proto::GraphDef ChainDef(int n) {
  proto::GraphDef def;
  proto::NodeDef* c = def.add_node();
  c->set_name("n0");
  c->set_op("Const");
  (*c->mutable_attr())["dtype"].set_type(proto::DT_FLOAT);
  proto::TensorProto* v = (*c->mutable_attr())["value"].mutable_tensor();
  v->set_dtype(proto::DT_FLOAT);
  v->add_float_val(1.0f);
  for (int i = 1; i < n; ++i) {
    proto::NodeDef* nd = def.add_node();
    nd->set_name(absl::StrCat("n", i));
    nd->set_op("Identity");
    nd->add_input(absl::StrCat("n", i - 1));
    (*nd->mutable_attr())["T"].set_type(proto::DT_FLOAT);
  }
  return def;
}

double MiB(int64_t b) { return static_cast<double>(b) / (1 << 20); }

TEST(GraphImportMemoryTest, DISABLED_OneMillionNodesThroughTheMaster) {
  InitDflow();
  constexpr int kNodes = 1000000;
  std::string bytes;
  ChainDef(kNodes).SerializeToString(&bytes);
  const double size = static_cast<double>(bytes.size());
  std::printf("GraphDef: %d nodes, %.1f MiB serialized\n", kNodes, MiB(bytes.size()));

  // What the gRPC service does: parse the request.
  int64_t before = ResetPeak();
  proto::CreateSessionRequest req;
  ASSERT_TRUE(req.mutable_graph_def()->ParseFromString(bytes));
  int64_t parsed = StatusBytes("VmRSS") - before;
  std::printf("parsed request: +%.1f MiB RSS (%.1fx the GraphDef)\n", MiB(parsed), parsed / size);

  // The graph layer alone: a Graph imported from the parsed GraphDef.
  {
    before = ResetPeak();
    Graph g;
    Status s = ImportGraphDef(req.graph_def(), &g);
    ASSERT_TRUE(s.ok()) << s;
    int64_t peak = StatusBytes("VmHWM") - before;
    int64_t kept = StatusBytes("VmRSS") - before;
    std::printf("ImportGraphDef alone: peak +%.1f MiB (%.1fx), the Graph +%.1f MiB (%.0f bytes per node)\n", MiB(peak),
                peak / size, MiB(kept), static_cast<double>(kept) / kNodes);
  }

  // The worker's own graph limits are lifted too.
  InProcessWorkerCache cluster;
  WorkerOptions wo;
  wo.max_graph_nodes = 0;
  cluster.Add("/job:worker/replica:0/task:0", std::make_shared<Worker>("/job:worker/replica:0/task:0", &cluster, wo));
  MasterOptions o;
  o.max_graph_nodes = 0;
  o.max_graph_bytes = 0;
  Master master("/job:worker/replica:0/task:0", &cluster, o);
  before = ResetPeak();
  proto::CreateSessionResponse resp;
  Status s = master.CreateSession(req, &resp);
  ASSERT_TRUE(s.ok()) << s;
  int64_t peak = StatusBytes("VmHWM") - before;
  int64_t kept = ResetPeak() - before;
  std::printf("CreateSession: peak +%.1f MiB (%.1fx), kept +%.1f MiB (%.1fx)\n", MiB(peak), peak / size, MiB(kept),
              kept / size);

  // The first step prepares: prune, place, partition, register the partition on the worker.
  before = ResetPeak();
  proto::RunStepRequest run;
  run.set_session_handle(resp.session_handle());
  run.add_fetch(absl::StrCat("n", kNodes - 1, ":0"));
  proto::RunStepResponse out;
  s = master.RunStep(run, &out, nullptr);
  ASSERT_TRUE(s.ok()) << s;
  peak = StatusBytes("VmHWM") - before;
  kept = ResetPeak() - before;
  std::printf("first RunStep: peak +%.1f MiB (%.1fx), kept +%.1f MiB (%.1fx)\n", MiB(peak), peak / size, MiB(kept),
              kept / size);
}

}  // namespace
}  // namespace dflow
