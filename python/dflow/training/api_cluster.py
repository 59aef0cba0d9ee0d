"""tf.train names for clusters and training loops: ClusterSpec, Server, replica_device_setter,
MonitoredTrainingSession and its sessions, Scaffold, the hooks, Coordinator, QueueRunner and
SyncReplicasOptimizer."""
from dflow.training.basic_session_run_hooks import (CheckpointSaverHook, CheckpointSaverListener, FeedFnHook,
                                                    FinalOpsHook, GlobalStepWaiterHook, LoggingTensorHook,
                                                    NanLossDuringTrainingError, NanTensorHook, ProfilerHook,
                                                    SecondOrStepTimer, StepCounterHook, StopAtStepHook,
                                                    SummarySaverHook)
from dflow.training.coordinator import Coordinator, LooperThread
from dflow.training.device_setter import replica_device_setter
from dflow.training.monitored_session import (ChiefSessionCreator, MonitoredSession, MonitoredTrainingSession,
                                              Scaffold, SessionCreator, SingularMonitoredSession,
                                              WorkerSessionCreator)
from dflow.training.queue_runner_impl import QueueRunner, add_queue_runner, start_queue_runners
from dflow.training.server_lib import ClusterSpec, Server
from dflow.training.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues
from dflow.training.sync_replicas_optimizer import SyncReplicasOptimizer

__all__ = [
    "CheckpointSaverHook", "CheckpointSaverListener", "ChiefSessionCreator", "ClusterSpec", "Coordinator",
    "FeedFnHook", "FinalOpsHook", "GlobalStepWaiterHook", "LoggingTensorHook", "LooperThread", "MonitoredSession",
    "MonitoredTrainingSession", "NanLossDuringTrainingError", "NanTensorHook", "ProfilerHook", "QueueRunner",
    "Scaffold", "SecondOrStepTimer", "Server", "SessionCreator", "SessionRunArgs", "SessionRunContext",
    "SessionRunHook", "SessionRunValues", "SingularMonitoredSession", "StepCounterHook", "StopAtStepHook",
    "SummarySaverHook", "SyncReplicasOptimizer", "WorkerSessionCreator", "add_queue_runner",
    "replica_device_setter", "start_queue_runners",
]
