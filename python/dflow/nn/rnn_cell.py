"""tf.nn.rnn_cell (tf.compat.v1.nn.rnn_cell)."""
from dflow.ops.rnn_cell_impl import (BasicLSTMCell, BasicRNNCell, GRUCell, LSTMCell, LSTMStateTuple,  # noqa: F401
                                     MultiRNNCell, RNNCell)

__all__ = ["RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell", "LSTMStateTuple"]
