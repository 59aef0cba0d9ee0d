"""tf.nn.rnn_cell (tf.compat.v1.nn.rnn_cell)."""
from dflow.ops.rnn_cell_impl import (BasicLSTMCell, BasicRNNCell, DeviceWrapper, DropoutWrapper,  # noqa: F401
                                     GRUCell, LSTMCell, LSTMStateTuple, MultiRNNCell, ResidualWrapper, RNNCell)

__all__ = ["RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell", "LSTMStateTuple",
           "DropoutWrapper", "ResidualWrapper", "DeviceWrapper"]
