// Job completion: the chief tells every task of the cluster that training is over, so that
// parameter servers (which otherwise serve forever, as TensorFlow's server.join() does) and
// workers end on their own with exit status 0.
//
// The signal is a JobComplete call of the worker interface (transport-neutral; gRPC carries it
// as WorkerService.JobComplete). A task that receives it:
//   1. refuses steps that start from then on with OutOfRange (JobCompleteError), so a trainer
//      that is still looping ends the way an exhausted input ends it;
//   2. lets the steps in progress finish for up to drain_ms, then fails those still running
//      (a replica waiting for a token that will never come) with the same OutOfRange;
//   3. stops its server: Server::Join returns and Server::job_complete() is true.
// A task that is told twice ignores the second call.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "distributed/worker_interface.h"
#include "proto/master.pb.h"

namespace dflow {

// Default time a task gives the steps in progress to finish.
inline constexpr int64_t kDefaultJobDrainMs = 5000;
// Default time to wait for a task's acknowledgement.
inline constexpr int64_t kDefaultJobCompleteTimeoutMs = 10000;
// Default time to keep trying the tasks that could not be told.
inline constexpr int64_t kDefaultJobCompleteRetryMs = 60000;
// How long a task where nothing serves (connections refused or reset) may take to come back
// before it is no longer tried.
inline constexpr int64_t kJobCompleteGoneMs = 3000;

// The error of a step refused or failed on `task` because `source` declared the job complete.
// OutOfRange: training is over, not failed.
Status JobCompleteError(const std::string& task, const std::string& source);
// Whether `s` is (or wraps) a JobCompleteError.
bool IsJobCompleteError(const Status& s);

// Sends JobComplete to every task of `workers` in three waves, the tasks of each wave at once
// (each call bounded by req.timeout_ms): the tasks of jobs other than "ps", then the ps tasks, then
// `local_task` (when it is in the cluster), so that a worker knows the job is complete before a ps
// task it uses stops, and the caller's own server stops after the others were told. Before the
// last wave, the tasks that could not be told are tried again with backoff (200 ms to 2 s) for
// req.retry_ms: a task cut off from this one learns the job is over once the link is back,
// instead of retrying its steps until it fails. A task where nothing serves (every try's
// connection refused or reset: its process is gone) is tried for kJobCompleteGoneMs only. Fills `resp` with the tasks told and those that
// could not be (not an error: the job is over for them too). Never blocks longer than about
// three times the timeout plus the retry time.
void BroadcastJobComplete(WorkerCache* workers, const std::string& local_task, const proto::CompleteJobRequest& req,
                          proto::CompleteJobResponse* resp);

}  // namespace dflow
