#include "distributed/cluster_spec.h"

#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ErrorOf(const Status& s) {
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  return std::string(s.message());
}

std::string SpecError(const std::map<std::string, std::vector<std::string>>& jobs) {
  return ErrorOf(ClusterSpec::FromJobs(jobs).status());
}

std::string TfConfigError(absl::string_view json) { return ErrorOf(ParseTfConfig(json).status()); }

TEST(ClusterSpecTest, FromJobs) {
  auto spec = ClusterSpec::FromJobs({{"worker", {"127.0.0.1:2223", "127.0.0.1:2224"}}, {"ps", {"127.0.0.1:2222"}}});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->job_names(), ElementsAre("ps", "worker"));
  EXPECT_EQ(spec->num_tasks("ps"), 1);
  EXPECT_EQ(spec->num_tasks("worker"), 2);
  EXPECT_EQ(spec->num_tasks("chief"), 0);
  EXPECT_TRUE(spec->HasTask("worker", 1));
  EXPECT_FALSE(spec->HasTask("worker", 2));
  EXPECT_FALSE(spec->HasTask("worker", -1));
  EXPECT_FALSE(spec->HasTask("nope", 0));
  EXPECT_EQ(*spec->TaskAddress("worker", 1), "127.0.0.1:2224");
  EXPECT_EQ(*spec->TaskAddress("ps", 0), "127.0.0.1:2222");
  EXPECT_THAT(spec->TaskNames(),
              ElementsAre("/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0", "/job:worker/replica:0/task:1"));
  EXPECT_EQ(spec->DebugString(), "ps: [127.0.0.1:2222], worker: [127.0.0.1:2223, 127.0.0.1:2224]");
  EXPECT_EQ(spec->jobs().at("worker").at(0), "127.0.0.1:2223");
  ClusterSpec copy = *spec;
  EXPECT_EQ(copy.DebugString(), spec->DebugString());
}

TEST(ClusterSpecTest, FromSparseJobs) {
  auto spec = ClusterSpec::FromSparseJobs({{"worker", {{1, "h:1"}, {3, "h:3"}}}, {"ps", {{0, "p:1"}}}});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->num_tasks("worker"), 2);
  EXPECT_TRUE(spec->HasTask("worker", 3));
  EXPECT_FALSE(spec->HasTask("worker", 0));
  EXPECT_THAT(spec->TaskNames(),
              ElementsAre("/job:ps/replica:0/task:0", "/job:worker/replica:0/task:1", "/job:worker/replica:0/task:3"));
  EXPECT_EQ(spec->DebugString(), "ps: [p:1], worker: {1: h:1, 3: h:3}");
  EXPECT_THAT(ErrorOf(spec->TaskAddress("worker", 2).status()),
              HasSubstr("Task index 2 is out of range for job 'worker', which has tasks [1, 3]"));
  EXPECT_THAT(ErrorOf(ClusterSpec::FromSparseJobs({{"worker", {{-1, "h:1"}}}}).status()),
              HasSubstr("job 'worker' has a negative task index -1"));
}

TEST(ClusterSpecTest, AcceptedAddresses) {
  // Port 0 asks the OS for a free port when a server binds the address.
  for (const char* a : {"h:1", "h:0", "localhost:65535", "10.0.0.1:2222", "[::1]:2222", "[fe80::1%eth0]:80",
                        "my-host.example.com:8080"}) {
    EXPECT_TRUE(ClusterSpec::FromJobs({{"worker", {a}}}).ok()) << a;
  }
}

TEST(ClusterSpecTest, LookupErrors) {
  auto spec = ClusterSpec::FromJobs({{"ps", {"a:1"}}, {"worker", {"b:1", "c:1"}}});
  ASSERT_TRUE(spec.ok());
  EXPECT_THAT(ErrorOf(spec->TaskAddress("chief", 0).status()),
              HasSubstr("Job 'chief' is not in the cluster (jobs: ps, worker)"));
  EXPECT_THAT(ErrorOf(spec->TaskAddress("worker", 2).status()),
              HasSubstr("Task index 2 is out of range for job 'worker', which has tasks 0..1"));
  EXPECT_THAT(ErrorOf(spec->TaskAddress("ps", -1).status()), HasSubstr("which has task 0 only"));
}

TEST(ClusterSpecTest, ValidationErrors) {
  EXPECT_THAT(SpecError({}), HasSubstr("Invalid cluster: it has no jobs"));
  EXPECT_THAT(SpecError({{"ps", {}}}), HasSubstr("job 'ps' has no tasks"));
  EXPECT_THAT(SpecError({{"1ps", {"a:1"}}}), HasSubstr("job name '1ps' is not valid"));
  EXPECT_THAT(SpecError({{"p s", {"a:1"}}}), HasSubstr("job name 'p s' is not valid"));
  EXPECT_THAT(SpecError({{"", {"a:1"}}}), HasSubstr("job name '' is not valid"));
  EXPECT_THAT(SpecError({{"ps", {"a:1", "b"}}}), HasSubstr("job 'ps' task 1: address 'b' has no port"));
  EXPECT_THAT(SpecError({{"ps", {"a:"}}}), HasSubstr("address 'a:' has no port"));
  EXPECT_THAT(SpecError({{"ps", {":80"}}}), HasSubstr("address ':80' has an empty host"));
  EXPECT_THAT(SpecError({{"ps", {""}}}), HasSubstr("address '' is empty"));
  EXPECT_THAT(SpecError({{"ps", {"a:65536"}}}), HasSubstr("has port 65536, which is out of range 0..65535"));
  EXPECT_THAT(SpecError({{"ps", {"a:99999999999"}}}), HasSubstr("bad port '99999999999'"));
  EXPECT_THAT(SpecError({{"ps", {"a:-1"}}}), HasSubstr("bad port '-1'"));
  EXPECT_THAT(SpecError({{"ps", {"a:http"}}}), HasSubstr("bad port 'http'"));
  EXPECT_THAT(SpecError({{"ps", {"a b:1"}}}), HasSubstr("contains a space"));
  EXPECT_THAT(SpecError({{"ps", {"a:1,b:2"}}}), HasSubstr("a comma"));
  EXPECT_THAT(SpecError({{"ps", {"::1:80"}}}), HasSubstr("IPv6 host without brackets"));
  EXPECT_THAT(SpecError({{"ps", {"[::1:80"}}}), HasSubstr("'[' without ']'"));
  EXPECT_THAT(SpecError({{"ps", {"[::1]"}}}), HasSubstr("has no port"));
  EXPECT_THAT(SpecError({{"ps", {"[]:1"}}}), HasSubstr("empty host"));
  EXPECT_THAT(SpecError({{"ps", {"h:1"}}, {"worker", {"h:2", "h:1"}}}),
              HasSubstr("address 'h:1' is used by both /job:ps/replica:0/task:0 and /job:worker/replica:0/task:1"));
  EXPECT_THAT(SpecError({{"worker", {"h:2", "h:2"}}}), HasSubstr("address 'h:2' is used by both"));
  EXPECT_THAT(SpecError({{"ps", {std::string(1000, 'x')}}}), HasSubstr("..."));  // long input is cut
}

TEST(TaskConfigTest, FromFlags) {
  auto c = TaskConfigFromFlags("h1:2222,h2:2222", "h3:2222", "worker", 0);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->job_name, "worker");
  EXPECT_EQ(c->task_index, 0);
  EXPECT_TRUE(c->is_chief);
  EXPECT_EQ(c->cluster.DebugString(), "ps: [h1:2222, h2:2222], worker: [h3:2222]");
  c = TaskConfigFromFlags("h1:2222,h2:2222", "h3:2222", "ps", 1);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->is_chief);
  EXPECT_EQ(*c->cluster.TaskAddress("ps", 1), "h2:2222");
  c = TaskConfigFromFlags("h1:2222", "h3:2222,h4:2222", "worker", 1);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->is_chief);
  // No ps job at all.
  c = TaskConfigFromFlags("", "h3:2222", "worker", 0);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->cluster.job_names(), ElementsAre("worker"));
}

TEST(TaskConfigTest, FromFlagsErrorsNameTheFlag) {
  EXPECT_THAT(ErrorOf(TaskConfigFromFlags("h:1", "", "worker", 0).status()), HasSubstr("--worker_hosts is empty"));
  EXPECT_THAT(ErrorOf(TaskConfigFromFlags("", "h:2", "ps", 0).status()),
              HasSubstr("--job_name is 'ps' but --ps_hosts is empty"));
  EXPECT_THAT(ErrorOf(TaskConfigFromFlags("h:1,,h:3", "h:2", "worker", 0).status()),
              HasSubstr("--ps_hosts has an empty entry at position 1"));
  EXPECT_THAT(ErrorOf(TaskConfigFromFlags("h:1", "h:2,", "worker", 0).status()),
              HasSubstr("--worker_hosts has an empty entry at position 1"));
  EXPECT_THAT(ErrorOf(TaskConfigFromFlags("h:1", "h:2", "chief", 0).status()),
              HasSubstr("--job_name must be 'ps' or 'worker', got 'chief'"));
  EXPECT_THAT(ErrorOf(TaskConfigFromFlags("h:1", "h:2", "", 0).status()), HasSubstr("--job_name"));
  EXPECT_THAT(ErrorOf(TaskConfigFromFlags("h:1", "h:2,h:3", "worker", 2).status()),
              HasSubstr("--task_index 2 is out of range: --worker_hosts lists 2 tasks of job 'worker' (indices 0..1)"));
  EXPECT_THAT(ErrorOf(TaskConfigFromFlags("h:1", "h:2", "ps", -1).status()),
              HasSubstr("--task_index -1 is out of range: --ps_hosts lists 1 task"));
  EXPECT_THAT(ErrorOf(TaskConfigFromFlags("h:1", "h:1", "ps", 0).status()),
              HasSubstr("--ps_hosts/--worker_hosts: Invalid cluster: address 'h:1' is used by both"));
  EXPECT_THAT(ErrorOf(TaskConfigFromFlags("h", "h:1", "ps", 0).status()),
              HasSubstr("--ps_hosts/--worker_hosts: Invalid cluster: job 'ps' task 0: address 'h' has no port"));
}

constexpr char kTfConfig[] =
    R"({"cluster": {"chief": ["c:1"], "worker": ["w:1", "w:2"], "ps": ["p:1"]},
        "task": {"type": "worker", "index": 1}})";

TEST(TfConfigTest, Parses) {
  auto c = ParseTfConfig(kTfConfig);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->job_name, "worker");
  EXPECT_EQ(c->task_index, 1);
  EXPECT_FALSE(c->is_chief);
  EXPECT_EQ(c->cluster.DebugString(), "chief: [c:1], ps: [p:1], worker: [w:1, w:2]");
}

TEST(TfConfigTest, IsChief) {
  // With a chief job, chief 0 is the chief and worker 0 is not.
  auto c =
      ParseTfConfig(R"({"cluster": {"chief": ["c:1"], "worker": ["w:1"]}, "task": {"type": "chief", "index": 0}})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->is_chief);
  c = ParseTfConfig(R"({"cluster": {"chief": ["c:1"], "worker": ["w:1"]}, "task": {"type": "worker", "index": 0}})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->is_chief);
  // Without one, worker 0 is.
  c = ParseTfConfig(
      R"({"cluster": {"worker": ["w:1", "w:2"], "ps": ["p:1"]}, "task": {"type": "worker", "index": 0}})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->is_chief);
  c = ParseTfConfig(R"({"cluster": {"worker": ["w:1"], "ps": ["p:1"]}, "task": {"type": "ps", "index": 0}})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->is_chief);
}

TEST(TfConfigTest, OptionalFormsAndKeys) {
  // Sparse jobs, TensorFlow's optional keys, an index written as 1.0.
  auto c = ParseTfConfig(R"({"cluster": {"worker": {"1": "w:1", "4": "w:4"}}, "environment": "cloud",
                             "rpc_layer": "grpc", "task": {"type": "worker", "index": 4.0, "trial": "1"}})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->task_index, 4);
  EXPECT_FALSE(c->is_chief);  // worker 0 is the chief, and there is none here
  EXPECT_EQ(c->cluster.DebugString(), "worker: {1: w:1, 4: w:4}");
  // The evaluator need not be in the cluster (TensorFlow's train_and_evaluate form).
  c = ParseTfConfig(R"({"cluster": {"chief": ["c:1"], "worker": ["w:1"]}, "task": {"type": "evaluator", "index": 0}})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->job_name, "evaluator");
  EXPECT_FALSE(c->is_chief);
  c = ParseTfConfig(
      R"({"cluster": {"evaluator": ["e:1"], "worker": ["w:1"]}, "task": {"type": "evaluator", "index": 0}})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(*c->cluster.TaskAddress("evaluator", 0), "e:1");
}

TEST(TfConfigTest, Errors) {
  EXPECT_THAT(TfConfigError(R"({"cluster": {"ps": ["h:1"]})"),
              HasSubstr("TF_CONFIG: JSON: Unexpected end of string. Expected , or } after key:value pair. at the "
                        "end of the input"));
  EXPECT_THAT(TfConfigError(R"({"cluster": x})"), HasSubstr("TF_CONFIG: JSON: Unexpected token. near 'x}'"));
  EXPECT_THAT(TfConfigError("[1]"),
              HasSubstr("TF_CONFIG: must be a JSON object with \"cluster\" and \"task\", got array"));
  EXPECT_THAT(TfConfigError(R"("text")"), HasSubstr("TF_CONFIG: must be a JSON object"));
  EXPECT_THAT(TfConfigError("12"), HasSubstr("got number"));
  EXPECT_THAT(TfConfigError("null"), HasSubstr("got null"));
  EXPECT_THAT(TfConfigError(""), HasSubstr("TF_CONFIG: JSON: Unexpected end of string"));
  EXPECT_THAT(TfConfigError(R"({"task": {"type": "worker", "index": 0}})"), HasSubstr("\"cluster\" is missing"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}})"), HasSubstr("\"task\" is missing"));
  EXPECT_THAT(TfConfigError(R"({"cluster": [], "task": {}})"), HasSubstr("\"cluster\" must be an object"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {}, "task": {}})"), HasSubstr("\"cluster\" has no jobs"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": []}, "task": {"type": "worker", "index": 0}})"),
              HasSubstr("job 'worker' has no tasks"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"master": ["m:1"]}, "task": {"type": "master", "index": 0}})"),
              HasSubstr("cluster has job \"master\"; TF_CONFIG jobs are chief, worker, ps and evaluator"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": "w:1"}, "task": {"type": "worker", "index": 0}})"),
              HasSubstr("cluster.worker must be a list of \"host:port\" strings, got string"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1", 2]}, "task": {"type": "worker", "index": 0}})"),
              HasSubstr("cluster.worker[1] must be a \"host:port\" string, got number"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": {"x": "w:1"}}, "task": {"type": "worker", "index": 0}})"),
              HasSubstr("task index \"x\", which is not a non-negative integer"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": {"-1": "w:1"}}, "task": {"type": "worker", "index": 0}})"),
              HasSubstr("task index \"-1\""));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": {"0": 5}}, "task": {"type": "worker", "index": 0}})"),
              HasSubstr("cluster.worker.0 must be a \"host:port\" string, got number"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"chief": ["a:1", "b:1"]}, "task": {"type": "chief", "index": 0}})"),
              HasSubstr("cluster.chief has 2 tasks; there can be only one"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w"]}, "task": {"type": "worker", "index": 0}})"),
              HasSubstr("TF_CONFIG: Invalid cluster: job 'worker' task 0: address 'w' has no port"));
  EXPECT_THAT(
      TfConfigError(R"({"cluster": {"worker": ["w:1"], "ps": ["w:1"]}, "task": {"type": "worker", "index": 0}})"),
      HasSubstr("address 'w:1' is used by both"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:70000"]}, "task": {"type": "worker", "index": 0}})"),
              HasSubstr("out of range 0..65535"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "task": []})"),
              HasSubstr("\"task\" must be an object"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "task": {"index": 0}})"),
              HasSubstr("task.type is missing"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker"}})"),
              HasSubstr("task.index is missing"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "task": {"type": 1, "index": 0}})"),
              HasSubstr("task.type must be a string, got number"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "master", "index": 0}})"),
              HasSubstr("task.type \"master\" is not one of chief, worker, ps, evaluator"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": "0"}})"),
              HasSubstr("task.index must be an integer, got string \"0\""));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": 0.5}})"),
              HasSubstr("task.index must be an integer, got 0.5"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": -1}})"),
              HasSubstr("task.index must be in [0, 1073741824], got -1"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": 1e30}})"),
              HasSubstr("task.index must be in"));
  // JSON numbers are doubles: the index must be an integer in range, whatever way it is written.
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": 1.5}})"),
              HasSubstr("task.index must be an integer, got 1.5"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": 1e20}})"),
              HasSubstr("task.index must be in [0, 1073741824], got 1e+20"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": true}})"),
              HasSubstr("task.index must be an integer, got bool true"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": null}})"),
              HasSubstr("task.index must be an integer, got null"));
  EXPECT_TRUE(
      ParseTfConfig(R"({"cluster": {"worker": ["w:1", "w:2"]}, "task": {"type": "worker", "index": 1e0}})").ok());
  EXPECT_THAT(
      TfConfigError(R"({"cluster": {"worker": {"1": "w:1", "01": "w:2"}}, "task": {"type": "worker", "index": 1}})"),
      HasSubstr("cluster.worker has task index 1 twice"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": 1}})"),
              HasSubstr("\"task\" names no task of \"cluster\": Task index 1 is out of range for job 'worker', "
                        "which has task 0 only"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "ps", "index": 0}})"),
              HasSubstr("Job 'ps' is not in the cluster (jobs: worker)"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "evaluator", "index": 1}})"),
              HasSubstr("only one evaluator"));
  EXPECT_THAT(
      TfConfigError(R"({"clustr": {}, "cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": 0}})"),
      HasSubstr("unknown key \"clustr\""));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": 0, "id": 1}})"),
              HasSubstr("unknown key \"id\" in \"task\""));
  EXPECT_THAT(
      TfConfigError(R"({"environment": 1, "cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": 0}})"),
      HasSubstr("\"environment\" must be a string"));
}

TEST(TfConfigTest, HostileJsonNeverCrashes) {
  // Deep nesting, huge numbers, bad escapes, truncations, mutations: always a clean error.
  EXPECT_THAT(TfConfigError(std::string(100000, '[')), HasSubstr("nested deeper than 16"));
  EXPECT_THAT(TfConfigError(std::string(16, '[') + std::string(16, ']')), HasSubstr("got array"));  // the limit itself
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": 1e999}})"),
              HasSubstr("TF_CONFIG: JSON: Number exceeds the range of double. near '1e999}}'"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "work\er", "index": 0}})"),
              HasSubstr("TF_CONFIG: JSON: invalid escape in a string at byte 55"));
  EXPECT_THAT(TfConfigError(std::string(2 << 20, ' ')), HasSubstr("exceeds the limit"));
  // Strict JSON where protobuf's parser alone would be lenient, and what protobuf rejects.
  const std::string task = R"("task": {"type": "worker", "index": 0})";
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1",]}, )" + task + "}"),
              HasSubstr("TF_CONFIG: JSON: a trailing comma at byte 30"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {'worker': ["w:1"]}, )" + task + "}"),
              HasSubstr("TF_CONFIG: JSON: a single-quoted string"));
  EXPECT_THAT(TfConfigError("{\"cluster\": {\"worker\": [\"w:1\t\"]}, " + task + "}"),
              HasSubstr("TF_CONFIG: JSON: a control character in a string"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "cluster": {"ps": ["p:1"]}, )" + task + "}"),
              HasSubstr("TF_CONFIG: JSON: "));  // a duplicate key
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"], "worker": ["w:2"]}, )" + task + "}"),
              HasSubstr("Repeated map key: 'worker'"));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, /* c */ )" + task + "}"),
              HasSubstr("TF_CONFIG: JSON: "));
  EXPECT_THAT(TfConfigError(R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": NaN}})"),
              HasSubstr("TF_CONFIG: JSON: Unexpected token. near 'NaN}}'"));
  EXPECT_THAT(TfConfigError("{\"cluster\": {\"worker\": [\"w:\xff\"]}, " + task + "}"),
              HasSubstr("TF_CONFIG: JSON: Encountered non UTF-8 code points."));
  const std::string doc = kTfConfig;
  for (size_t n = 0; n < doc.size(); ++n) EXPECT_FALSE(ParseTfConfig(doc.substr(0, n)).ok()) << n;
  std::mt19937 rng(7);
  for (int iter = 0; iter < 20000; ++iter) {
    std::string m = doc;
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) m[rng() % m.size()] = static_cast<char>(rng() % 256);
    auto c = ParseTfConfig(m);
    if (c.ok()) {
      EXPECT_TRUE(c->cluster.HasTask(c->job_name, c->task_index)) << m;
    }
  }
}

TEST(TaskConfigFromArgsTest, Flags) {
  std::vector<std::string> rest;
  auto c = TaskConfigFromArgs({"--lr=0.1", "--ps_hosts=p:1", "--worker_hosts", "w:1,w:2", "pos", "--job_name=worker",
                               "--task_index", "1", "--steps", "5"},
                              kTfConfig, &rest);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->job_name, "worker");
  EXPECT_EQ(c->task_index, 1);
  EXPECT_EQ(c->cluster.DebugString(), "ps: [p:1], worker: [w:1, w:2]");  // flags win over TF_CONFIG
  EXPECT_THAT(rest, ElementsAre("--lr=0.1", "pos", "--steps", "5"));
  // --task_index defaults to 0 and --ps_hosts to none.
  c = TaskConfigFromArgs({"--worker_hosts=w:1", "--job_name=worker"}, "", &rest);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->task_index, 0);
  EXPECT_TRUE(c->is_chief);
  EXPECT_TRUE(rest.empty());
  EXPECT_TRUE(TaskConfigFromArgs({"--worker_hosts=w:1", "--job_name=worker", "x"}, "", nullptr).ok());
  // `dflow launch` appends the cluster flags after the trainer's own arguments, "--" among them.
  c = TaskConfigFromArgs({"x", "--", "--y", "--worker_hosts=w:1", "--job_name=worker"}, "", &rest);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(rest, ElementsAre("x", "--", "--y"));
}

TEST(TaskConfigFromArgsTest, TfConfigWhenNoFlags) {
  std::vector<std::string> rest;
  auto c = TaskConfigFromArgs({"--steps=3", "data.csv"}, kTfConfig, &rest);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->job_name, "worker");
  EXPECT_EQ(c->task_index, 1);
  EXPECT_THAT(rest, ElementsAre("--steps=3", "data.csv"));
  auto bad = TaskConfigFromArgs({}, "{", &rest);
  EXPECT_THAT(ErrorOf(bad.status()), HasSubstr("TF_CONFIG: JSON:"));
}

TEST(TaskConfigFromArgsTest, Errors) {
  std::vector<std::string> rest;
  auto none = TaskConfigFromArgs({"--steps=3"}, "", &rest);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(none.status().message(), HasSubstr("TF_CONFIG"));
  EXPECT_EQ(TaskConfigFromArgs({}, "  \n", &rest).status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(ErrorOf(TaskConfigFromArgs({"--worker_hosts=w:1", "--job_name"}, "", &rest).status()),
              HasSubstr("--job_name needs a value"));
  EXPECT_THAT(ErrorOf(TaskConfigFromArgs({"--worker_hosts=w:1"}, "", &rest).status()),
              HasSubstr("--job_name is missing"));
  EXPECT_THAT(ErrorOf(TaskConfigFromArgs({"--job_name=ps", "--ps_hosts=p:1"}, "", &rest).status()),
              HasSubstr("--worker_hosts is missing"));
  EXPECT_THAT(
      ErrorOf(TaskConfigFromArgs({"--job_name=worker", "--job_name=ps", "--worker_hosts=w:1"}, "", &rest).status()),
      HasSubstr("--job_name is given twice"));
  for (const char* bad : {"x", "-1", "1.0", "", "99999999999999"}) {
    EXPECT_THAT(ErrorOf(TaskConfigFromArgs(
                            {"--worker_hosts=w:1", "--job_name=worker", std::string("--task_index=") + bad}, "", &rest)
                            .status()),
                HasSubstr("--task_index must be a non-negative integer"))
        << bad;
  }
  EXPECT_THAT(
      ErrorOf(TaskConfigFromArgs({"--worker_hosts=w:1", "--job_name=worker", "--task_index=3"}, "", &rest).status()),
      HasSubstr("--task_index 3 is out of range"));
}

}  // namespace
}  // namespace dflow
