"""tf.train names for state and training: optimizers, the global step, learning-rate schedules,
Saver and the checkpoint utilities."""
from dflow.summary import summary_iterator  # noqa: F401
from dflow.training.learning_rate_decay import (cosine_decay, exponential_decay, inverse_time_decay,  # noqa: F401
                                                natural_exp_decay, piecewise_constant, polynomial_decay)
from dflow.training.moving_averages import ExponentialMovingAverage  # noqa: F401
from dflow.training.optimizer import (AdadeltaOptimizer, AdagradDAOptimizer, AdagradOptimizer,  # noqa: F401
                                      AdamOptimizer, FtrlOptimizer, GradientDescentOptimizer, MomentumOptimizer,
                                      Optimizer, ProximalAdagradOptimizer, ProximalGradientDescentOptimizer,
                                      RMSPropOptimizer)
from dflow.training.saver import (CheckpointReader, CheckpointState, NewCheckpointReader, Saver,  # noqa: F401
                                  SaverDef, checkpoint_exists, export_meta_graph, get_checkpoint_mtimes,
                                  get_checkpoint_state, import_meta_graph, init_from_checkpoint,
                                  latest_checkpoint, list_variables, load_checkpoint, load_variable,
                                  remove_checkpoint)
from dflow.training.training_util import (assert_global_step, create_global_step, get_global_step,  # noqa: F401
                                          get_or_create_global_step, global_step)

piecewise_constant_decay = piecewise_constant

__all__ = ["ExponentialMovingAverage", "AdadeltaOptimizer", "AdagradDAOptimizer", "AdagradOptimizer", "AdamOptimizer", "CheckpointReader",
           "CheckpointState", "FtrlOptimizer", "GradientDescentOptimizer", "MomentumOptimizer", "NewCheckpointReader",
           "Optimizer", "ProximalAdagradOptimizer", "ProximalGradientDescentOptimizer", "RMSPropOptimizer", "Saver",
           "SaverDef", "assert_global_step", "checkpoint_exists", "cosine_decay", "create_global_step",
           "exponential_decay", "export_meta_graph", "get_checkpoint_mtimes", "get_checkpoint_state",
           "get_global_step", "get_or_create_global_step", "global_step", "import_meta_graph",
           "init_from_checkpoint", "inverse_time_decay", "latest_checkpoint", "list_variables", "load_checkpoint",
           "load_variable", "natural_exp_decay", "piecewise_constant", "piecewise_constant_decay",
           "polynomial_decay", "remove_checkpoint", "summary_iterator"]
