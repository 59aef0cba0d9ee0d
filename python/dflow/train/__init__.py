"""tf.train: optimizers, savers and training helpers (api_state), clusters, monitored sessions
and hooks (api_cluster)."""
from dflow.training.api_state import *  # noqa: F401,F403
from dflow.training.api_cluster import *  # noqa: F401,F403
from dflow.framework.graph_io import write_graph  # noqa: F401,E402
from dflow.io.example_pb import *  # noqa: F401,F403,E402  Example, Features, Feature, ...
