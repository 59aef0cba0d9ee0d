"""tf.train.ClusterSpec and tf.train.Server over dflow's C++ Server (include/dflow/server.h).

    cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:2222"], "worker": ["127.0.0.1:2223"]})
    server = tf.train.Server(cluster, job_name="ps", task_index=0)
    server.join()                                   # until the job is complete (see below)

    server = tf.train.Server.create_local_server()  # one task on a free port
    with tf.Session(server.target) as sess: ...     # b"grpc://localhost:PORT"

ClusterSpec is TensorFlow's Python class (a dict of job -> list, or dict of task index ->
address); the C++ ClusterSpec checks it when a Server is made (an InvalidArgumentError names
the job, the task and the address).

`Server.join()` blocks until the server stops: when the chief's training session ends the job
(dflow's job completion: the ps tasks of a trainer written as in TensorFlow's guide return from
join and exit 0), on Ctrl-C (KeyboardInterrupt once the server stopped) or SIGTERM (the server
stops, then the signal's own action: the process ends). The GIL is released while it waits.

Ports: an address with port 0 makes the OS pick one when the server starts (`server.port`
tells which); the other tasks of a cluster cannot know it, so multi-task clusters need real
ports. `_dflow.pick_free_ports(n)` picks free ones on 127.0.0.1 (tests, local clusters).
"""
from dflow import _dflow


def _as_str(x, what):
    if isinstance(x, bytes):
        return x.decode()
    if isinstance(x, str):
        return x
    raise TypeError("%s %r must be bytes or unicode" % (what, x))


class ClusterSpec:
    """Represents a cluster as a set of "tasks", organized into "jobs" (TensorFlow's class)."""

    def __init__(self, cluster):
        if isinstance(cluster, dict):
            self._cluster_spec = {}
            for job_name, tasks in cluster.items():
                if isinstance(tasks, (list, tuple)):
                    job_tasks = {i: task for i, task in enumerate(tasks)}
                elif isinstance(tasks, dict):
                    job_tasks = {i: task for i, task in tasks.items()}
                else:
                    raise TypeError("The tasks for job %r must be a list or a dictionary from integers to strings."
                                    % job_name)
                self._cluster_spec[job_name] = job_tasks
            self._make_cluster_def()
        elif isinstance(cluster, ClusterSpec):
            self._cluster_spec = {job: dict(tasks) for job, tasks in cluster._cluster_spec.items()}
            self._make_cluster_def()
        elif _is_cluster_def(cluster):
            self._cluster_spec = {}
            for job_def in cluster.job:
                name = job_def.name
                self._cluster_spec[name] = {i: t for i, t in job_def.tasks.items()}
            self._make_cluster_def()
        else:
            raise TypeError("`cluster` must be a dictionary mapping one or more job names to lists of network "
                            "addresses, or a `ClusterDef` protocol buffer")

    def __bool__(self):
        return bool(self._cluster_spec)

    __nonzero__ = __bool__

    def __eq__(self, other):
        if isinstance(other, ClusterSpec):
            return self._cluster_spec == other._cluster_spec
        return self._cluster_spec == other

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(str(self))

    def __str__(self):
        key_values = self.as_dict()
        string_items = [repr(k) + ": " + repr(key_values[k]) for k in sorted(key_values)]
        return "ClusterSpec({" + ", ".join(string_items) + "})"

    __repr__ = __str__

    def as_dict(self):
        """job -> list of addresses (dense task indices) or dict index -> address (sparse)."""
        ret = {}
        for job in self.jobs:
            task_indices = self.task_indices(job)
            if len(task_indices) == 0:
                ret[job] = {}
                continue
            if max(task_indices) + 1 == len(task_indices):
                ret[job] = self.job_tasks(job)
            else:
                ret[job] = {i: self.task_address(job, i) for i in task_indices}
        return ret

    def as_cluster_def(self):
        """The cluster as a tf.train.ClusterDef protocol buffer."""
        return self._cluster_def

    @property
    def jobs(self):
        return list(self._cluster_spec.keys())

    def _job(self, job_name):
        try:
            return self._cluster_spec[job_name]
        except KeyError:
            raise ValueError("No such job in cluster: %r" % job_name) from None

    def num_tasks(self, job_name):
        return len(self._job(job_name))

    def task_indices(self, job_name):
        return list(sorted(self._job(job_name).keys()))

    def task_address(self, job_name, task_index):
        job = self._job(job_name)
        try:
            return job[task_index]
        except KeyError:
            raise ValueError("No task with index %r in job %r" % (task_index, job_name)) from None

    def job_tasks(self, job_name):
        """The addresses of the job's tasks by index (None where an index has no task)."""
        job = self._job(job_name)
        ret = [None for _ in range(max(job.keys()) + 1)]
        for i, task in job.items():
            ret[i] = task
        return ret

    def _make_cluster_def(self):
        self._cluster_def = _cluster_def_class()()
        for job_name, tasks in sorted(self._cluster_spec.items()):
            job_def = self._cluster_def.job.add()
            job_def.name = _as_str(job_name, "Job name")
            for i, task_address in sorted(tasks.items()):
                job_def.tasks[i] = _as_str(task_address, "Task address")

    def _jobs_for_cpp(self):
        return {_as_str(job, "Job name"): {int(i): _as_str(a, "Task address") for i, a in tasks.items()}
                for job, tasks in self._cluster_spec.items()}


# TensorFlow's ClusterDef, JobDef and ServerDef (tensorflow/core/protobuf/cluster.proto and
# tensorflow_server.proto; the same field numbers), as Python protobuf classes of a pool of their
# own: as_cluster_def() and server_def serialize as TensorFlow's do.
_protos = {}


def _proto_classes():
    if _protos:
        return _protos
    from google.protobuf import descriptor_pb2
    from google.protobuf import descriptor_pool
    from google.protobuf import message_factory
    F = descriptor_pb2.FieldDescriptorProto
    f = descriptor_pb2.FileDescriptorProto(name="dflow/cluster.proto", package="tensorflow", syntax="proto3")
    job = f.message_type.add(name="JobDef")
    job.field.add(name="name", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    job.field.add(name="tasks", number=2, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                  type_name=".tensorflow.JobDef.TasksEntry")
    entry = job.nested_type.add(name="TasksEntry")
    entry.field.add(name="key", number=1, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry.options.map_entry = True
    cluster = f.message_type.add(name="ClusterDef")
    cluster.field.add(name="job", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                      type_name=".tensorflow.JobDef")
    server = f.message_type.add(name="ServerDef")
    server.field.add(name="cluster", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                     type_name=".tensorflow.ClusterDef")
    server.field.add(name="job_name", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    server.field.add(name="task_index", number=3, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    server.field.add(name="protocol", number=5, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    server.field.add(name="port", number=6, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    for name in ("JobDef", "ClusterDef", "ServerDef"):
        _protos[name] = message_factory.GetMessageClass(pool.FindMessageTypeByName("tensorflow." + name))
    return _protos


def _cluster_def_class():
    return _proto_classes()["ClusterDef"]


def _server_def_class():
    return _proto_classes()["ServerDef"]


def _is_cluster_def(x):
    return isinstance(x, _cluster_def_class()) or type(x).__name__ == "ClusterDef" and hasattr(x, "job")


def _is_server_def(x):
    return isinstance(x, _server_def_class()) or type(x).__name__ == "ServerDef" and hasattr(x, "cluster")


def _make_server_def(server_or_cluster_def, job_name, task_index, protocol, config):
    if _is_server_def(server_or_cluster_def):
        d = server_or_cluster_def
        cluster_spec = ClusterSpec(d.cluster)
        job_name = job_name if job_name is not None else d.job_name
        task_index = task_index if task_index is not None else d.task_index
        protocol = protocol if protocol is not None else (d.protocol or "grpc")
    else:
        try:
            cluster_spec = ClusterSpec(server_or_cluster_def)
        except TypeError:
            raise TypeError("Could not convert `server_or_cluster_def` to a `tf.train.ServerDef` or "
                            "`tf.train.ClusterSpec`.") from None
        if job_name is None:
            if len(cluster_spec.jobs) == 1:
                job_name = cluster_spec.jobs[0]
            else:
                raise ValueError("Must specify an explicit `job_name`.")
        if task_index is None:
            task_indices = cluster_spec.task_indices(job_name)
            if len(task_indices) == 1:
                task_index = task_indices[0]
            else:
                raise ValueError("Must specify an explicit `task_index`.")
        if protocol is None:
            protocol = "grpc"
    cluster_spec.task_address(job_name, task_index)  # ValueError for a job or task not in the cluster
    if protocol != "grpc":
        raise ValueError("dflow servers speak gRPC only; protocol %r is not available" % (protocol,))
    server_def = _server_def_class()(cluster=cluster_spec.as_cluster_def(), job_name=job_name,
                                     task_index=task_index, protocol=protocol)
    return server_def, cluster_spec, job_name, task_index, config


class Server:
    """An in-process server: one task of a cluster (a master for sessions, a worker for steps)."""

    _LIMITS = ("step_memory_limit_bytes", "max_graph_bytes", "max_graph_nodes", "max_sessions_per_client",
               "session_idle_timeout_ms", "max_message_bytes")

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None, config=None, start=True,
                 credentials=None, insecure=False, allowed_dirs=None, **limits):
        """dflow's additions (docs/SECURITY.md): `credentials`, a directory made by `dflow credentials
        create` (else DFLOW_CREDENTIALS, else, on a loopback address, this user's own store);
        `insecure=True` serves plaintext without authentication; `allowed_dirs`, the only
        directories ops run here may read or write (default: the working directory and the
        temporary directory); and the limits step_memory_limit_bytes, max_graph_bytes,
        max_graph_nodes, max_sessions_per_client, session_idle_timeout_ms, max_message_bytes."""
        (self._server_def, self._cluster_spec, self._job_name, self._task_index,
         self._config) = _make_server_def(server_or_cluster_def, job_name, task_index, protocol, config)
        for k in limits:
            if k not in self._LIMITS:
                raise TypeError("Server() got an unexpected keyword argument %r" % (k,))
        if isinstance(allowed_dirs, (str, bytes)):
            allowed_dirs = [allowed_dirs]
        self._security = dict(credentials=str(credentials or ""), insecure=bool(insecure),
                              allowed_dirs=[_as_str(d, "allowed_dirs entry") for d in (allowed_dirs or [])],
                              limits={k: int(v) for k, v in limits.items()})
        self._h = None
        if start:
            self.start()

    def start(self):
        """Starts serving (binds the task's port). Idempotent."""
        if self._h is None:
            # (`config`, the default session config of the server's sessions, is kept: dflow's
            # sessions take their options from the client.)
            self._h = _dflow.Server.create(self._cluster_spec._jobs_for_cpp(), self._job_name, int(self._task_index),
                                           0, **self._security)

    def join(self):
        """Blocks until the server stops: the job is complete (the chief ended it), or Ctrl-C /
        SIGTERM stopped it."""
        self.start()
        self._h.join()

    def stop(self):
        """Fails the steps in progress, closes the sessions and stops serving (dflow's addition;
        TensorFlow servers stop with their process)."""
        if self._h is not None:
            self._h.stop()

    @property
    def server_def(self):
        return self._server_def

    @property
    def target(self):
        """b"grpc://localhost:PORT": the target of a tf.Session on this server."""
        if self._h is None:
            address = self._cluster_spec.task_address(self._job_name, self._task_index)
            return ("grpc://localhost:" + _as_str(address, "Task address").rsplit(":", 1)[1]).encode()
        return self._h.target.encode()

    @property
    def port(self):
        """The port this task serves (dflow's addition: the one the OS picked for port 0)."""
        self.start()
        return self._h.port

    @property
    def job_complete(self):
        """Whether this task was told that the job is complete (dflow's addition)."""
        return self._h is not None and self._h.job_complete

    def notify_job_complete(self, drain_ms=5000, timeout_ms=10000, retry_ms=60000):
        """Tells every task of the cluster that the job is complete, this one last (dflow's
        addition; MonitoredTrainingSession's chief does it when it closes). Returns the tasks
        told and those that could not be (gone already)."""
        self.start()
        return self._h.notify_job_complete(drain_ms, timeout_ms, retry_ms)

    @staticmethod
    def create_local_server(config=None, start=True):
        """A one-task cluster ("localhost" job) on a free port."""
        return Server({"localhost": ["localhost:0"]}, protocol="grpc", config=config, start=start)


def _reset(target, containers=None):
    raise NotImplementedError("tf.Session.reset is not supported by dflow: close the sessions instead")


def create_local_cluster(num_workers, num_ps, protocol="grpc", worker_config=None, ps_config=None):
    """Starts a cluster of `num_workers` workers and `num_ps` ps tasks in this process on free
    ports of 127.0.0.1 (TensorFlow's test_util.create_local_cluster); returns (workers, ps_servers)."""
    ports = _dflow.pick_free_ports(num_workers + num_ps)
    cluster = {"worker": ["127.0.0.1:%d" % p for p in ports[:num_workers]]}
    if num_ps > 0:
        cluster["ps"] = ["127.0.0.1:%d" % p for p in ports[num_workers:]]
    cs = ClusterSpec(cluster)
    workers = [Server(cs, job_name="worker", protocol=protocol, task_index=ix, config=worker_config, start=True)
               for ix in range(num_workers)]
    ps_servers = [Server(cs, job_name="ps", protocol=protocol, task_index=ix, config=ps_config, start=True)
                  for ix in range(num_ps)]
    return workers, ps_servers
