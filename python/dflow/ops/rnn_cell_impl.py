"""tf.nn.rnn_cell (tf.compat.v1.nn.rnn_cell): TensorFlow 1.x's RNN cells, with its variable names
(rnn/basic_lstm_cell/kernel, rnn/multi_rnn_cell/cell_0/gru_cell/gates/bias, ...) and equations.

A cell makes its variables on its first call, in a variable scope named after it, and uses the
same variables on every later call (inside a while loop too), as TensorFlow's layer-based cells do."""
import collections

from dflow.framework import dtypes
from dflow.framework import ops
from dflow.framework import tensor_shape
from dflow.ops import array_ops
from dflow.ops import init_ops
from dflow.ops import math_ops
from dflow.ops import nn_ops
from dflow.ops import variable_scope as vs

__all__ = ["RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell", "LSTMStateTuple",
           "DropoutWrapper", "ResidualWrapper", "DeviceWrapper"]


# ---- nested structures (tuples, lists and namedtuples, as TensorFlow's nest) ----
def _is_seq(x):
    return isinstance(x, (tuple, list))


def _flatten(x):
    if _is_seq(x):
        out = []
        for e in x:
            out.extend(_flatten(e))
        return out
    return [x]


def _pack_as(structure, flat):
    it = iter(flat)

    def build(s):
        if isinstance(s, tuple) and hasattr(s, "_fields"):
            return type(s)(*[build(e) for e in s])
        if _is_seq(s):
            return type(s)(build(e) for e in s)
        return next(it)
    return build(structure)


def _map(fn, structure):
    return _pack_as(structure, [fn(x) for x in _flatten(structure)])


_LSTMStateTuple = collections.namedtuple("LSTMStateTuple", ("c", "h"))


class LSTMStateTuple(_LSTMStateTuple):
    """(c, h): the state of an LSTM cell with state_is_tuple=True."""
    __slots__ = ()

    @property
    def dtype(self):
        (c, h) = self
        if c.dtype != h.dtype:
            raise TypeError("Inconsistent internal state: %s vs %s" % (str(c.dtype), str(h.dtype)))
        return c.dtype


def _size_list(size):
    if isinstance(size, tensor_shape.TensorShape):
        return size.as_list()
    if isinstance(size, ops.Tensor):
        raise TypeError("dflow's rnn cells need static sizes, got the tensor %s" % size.name)
    return [int(size)] if not _is_seq(size) else [int(s) for s in size]


def _zero_state_tensors(state_size, batch_size, dtype):
    def make(s):
        dims = _size_list(s)
        if isinstance(batch_size, int):
            return array_ops.zeros([batch_size] + dims, dtype=dtype)
        shape = array_ops.concat([array_ops.reshape(batch_size, [1]),
                                  ops.convert_to_tensor(dims, dtype=dtypes.int32)], 0)
        z = array_ops.zeros(shape, dtype=dtype)
        z.set_shape([None] + dims)
        return z
    return _map(make, state_size) if _is_seq(state_size) else make(state_size)


class RNNCell(object):
    """Abstract object representing an RNN cell (TensorFlow 1.x's interface): output_size,
    state_size, zero_state, and __call__(inputs, state, scope=None) -> (output, new_state)."""

    _base_name = "rnn_cell"

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        self._trainable = trainable
        self._name = name
        self._dtype = dtype
        self._reuse = kwargs.get("_reuse")
        self._scope = None  # the variable scope of the first call

    @property
    def state_size(self):
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self):
        raise NotImplementedError("Abstract method")

    @property
    def trainable_weights(self):
        return list(getattr(self, "_variables", []))

    weights = trainable_weights
    variables = trainable_weights

    def build(self, inputs_shape):
        pass

    def call(self, inputs, state):
        raise NotImplementedError("Abstract method")

    def __call__(self, inputs, state, scope=None):
        if scope is not None:
            with vs.variable_scope(scope, reuse=self._scope is not None or self._reuse or None) as s:
                self._scope = self._scope or s
                return self._call_built(inputs, state)
        if self._scope is None:
            with vs.variable_scope(self._name, default_name=self._base_name) as s:
                self._scope = s
                return self._call_built(inputs, state)
        with vs.variable_scope(self._scope, reuse=True):
            return self._call_built(inputs, state)

    def _call_built(self, inputs, state):
        if not getattr(self, "_built", False):
            first = _flatten(inputs)[0]
            self.build(first.shape)
            self._built = True
        return self.call(inputs, state)

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        if inputs is not None:
            inputs = ops.convert_to_tensor(inputs)
            batch_size = tensor_shape.dimension_value(inputs.shape[0])
            if batch_size is None:
                batch_size = array_ops.shape(inputs)[0]
            dtype = inputs.dtype
        return self.zero_state(batch_size, dtype)

    def zero_state(self, batch_size, dtype):
        """Zero-filled state tensor(s) for `batch_size` rows."""
        with ops.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            return _zero_state_tensors(self.state_size, batch_size, dtype)

    def _add_variable(self, name, shape, initializer=None, dtype=None):
        v = vs.get_variable(name, shape=shape, dtype=dtype or self._dtype or dtypes.float32,
                            initializer=initializer, trainable=self._trainable)
        if not hasattr(self, "_variables"):
            self._variables = []
        self._variables.append(v)
        return v


def _input_depth(inputs_shape):
    shape = tensor_shape.as_shape(inputs_shape)
    if shape.ndims is None or tensor_shape.dimension_value(shape[-1]) is None:
        raise ValueError("Expected inputs.shape[-1] to be known, saw shape: %s" % shape)
    return tensor_shape.dimension_value(shape[-1])


class BasicRNNCell(RNNCell):
    """output = new_state = act(W * input + U * state + B)."""

    _base_name = "basic_rnn_cell"

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = num_units
        self._activation = activation or nn_ops.tanh

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape)
        self._kernel = self._add_variable("kernel", [depth + self._num_units, self._num_units])
        self._bias = self._add_variable("bias", [self._num_units], initializer=init_ops.zeros_initializer())

    def call(self, inputs, state):
        gate_inputs = math_ops.matmul(array_ops.concat([inputs, state], 1), self._kernel)
        output = self._activation(nn_ops.bias_add(gate_inputs, self._bias))
        return output, output


class GRUCell(RNNCell):
    """Gated Recurrent Unit cell (cf. http://arxiv.org/abs/1406.1078), TensorFlow 1.x's variant."""

    _base_name = "gru_cell"

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None, bias_initializer=None,
                 name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = num_units
        self._activation = activation or nn_ops.tanh
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape)
        n = self._num_units
        with vs.variable_scope("gates"):
            self._gate_kernel = self._add_variable("kernel", [depth + n, 2 * n], self._kernel_initializer)
            self._gate_bias = self._add_variable(
                "bias", [2 * n], self._bias_initializer or init_ops.constant_initializer(1.0))
        with vs.variable_scope("candidate"):
            self._candidate_kernel = self._add_variable("kernel", [depth + n, n], self._kernel_initializer)
            self._candidate_bias = self._add_variable(
                "bias", [n], self._bias_initializer or init_ops.zeros_initializer())

    def call(self, inputs, state):
        gate_inputs = nn_ops.bias_add(math_ops.matmul(array_ops.concat([inputs, state], 1), self._gate_kernel),
                                      self._gate_bias)
        value = nn_ops.sigmoid(gate_inputs)
        r, u = array_ops.split(value=value, num_or_size_splits=2, axis=1)
        r_state = r * state
        candidate = nn_ops.bias_add(
            math_ops.matmul(array_ops.concat([inputs, r_state], 1), self._candidate_kernel), self._candidate_bias)
        c = self._activation(candidate)
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class BasicLSTMCell(RNNCell):
    """Basic LSTM recurrent network cell (no peepholes, no projection; forget_bias added)."""

    _base_name = "basic_lstm_cell"

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or nn_ops.tanh

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_units) if self._state_is_tuple else 2 * self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape)
        n = self._num_units
        self._kernel = self._add_variable("kernel", [depth + n, 4 * n])
        self._bias = self._add_variable("bias", [4 * n], initializer=init_ops.zeros_initializer())

    def call(self, inputs, state):
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = array_ops.split(value=state, num_or_size_splits=2, axis=1)
        gate_inputs = nn_ops.bias_add(math_ops.matmul(array_ops.concat([inputs, h], 1), self._kernel), self._bias)
        i, j, f, o = array_ops.split(value=gate_inputs, num_or_size_splits=4, axis=1)
        forget_bias = ops.convert_to_tensor(self._forget_bias, dtype=f.dtype)
        new_c = c * nn_ops.sigmoid(f + forget_bias) + nn_ops.sigmoid(i) * self._activation(j)
        new_h = self._activation(new_c) * nn_ops.sigmoid(o)
        if self._state_is_tuple:
            new_state = LSTMStateTuple(new_c, new_h)
        else:
            new_state = array_ops.concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(RNNCell):
    """Long short-term memory unit (LSTM) recurrent network cell: optional peepholes, cell
    clipping and projection (num_proj, proj_clip); shards are not supported."""

    _base_name = "lstm_cell"

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None, num_proj=None,
                 proj_clip=None, num_unit_shards=None, num_proj_shards=None, forget_bias=1.0, state_is_tuple=True,
                 activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise NotImplementedError("dflow's LSTMCell does not shard its variables (num_unit_shards, "
                                      "num_proj_shards)")
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or nn_ops.tanh
        out = num_proj if num_proj else num_units
        self._state_size = LSTMStateTuple(num_units, out) if state_is_tuple else num_units + out
        self._output_size = out

    @property
    def state_size(self):
        return self._state_size

    @property
    def output_size(self):
        return self._output_size

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape)
        h_depth = self._num_proj if self._num_proj is not None else self._num_units
        n = self._num_units
        self._kernel = self._add_variable("kernel", [depth + h_depth, 4 * n], self._initializer)
        self._bias = self._add_variable("bias", [4 * n], init_ops.zeros_initializer())
        if self._use_peepholes:
            self._w_f_diag = self._add_variable("w_f_diag", [n], self._initializer)
            self._w_i_diag = self._add_variable("w_i_diag", [n], self._initializer)
            self._w_o_diag = self._add_variable("w_o_diag", [n], self._initializer)
        if self._num_proj is not None:
            with vs.variable_scope("projection"):
                self._proj_kernel = self._add_variable("kernel", [n, self._num_proj], self._initializer)

    def call(self, inputs, state):
        n = self._num_units
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = array_ops.slice(state, [0, 0], [-1, n])
            m_prev = array_ops.slice(state, [0, n], [-1, self._output_size])
        lstm_matrix = nn_ops.bias_add(math_ops.matmul(array_ops.concat([inputs, m_prev], 1), self._kernel),
                                      self._bias)
        i, j, f, o = array_ops.split(value=lstm_matrix, num_or_size_splits=4, axis=1)
        if self._use_peepholes:
            c = (nn_ops.sigmoid(f + self._forget_bias + self._w_f_diag * c_prev) * c_prev +
                 nn_ops.sigmoid(i + self._w_i_diag * c_prev) * self._activation(j))
        else:
            c = nn_ops.sigmoid(f + self._forget_bias) * c_prev + nn_ops.sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = math_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = nn_ops.sigmoid(o + self._w_o_diag * c) * self._activation(c)
        else:
            m = nn_ops.sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = math_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else array_ops.concat([c, m], 1)
        return m, new_state


class MultiRNNCell(RNNCell):
    """RNN cell composed sequentially of multiple simple cells (cell_0, cell_1, ... scopes)."""

    _base_name = "multi_rnn_cell"

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not _is_seq(cells):
            raise TypeError("cells must be a list or tuple, but saw: %s." % (cells,))
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(_is_seq(c.state_size) for c in self._cells):
            raise ValueError("Some cells return tuples of states, but the flag state_is_tuple is not set.  "
                             "State sizes are: %s" % str([c.state_size for c in self._cells]))

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(cell.state_size for cell in self._cells)
        return sum(cell.state_size for cell in self._cells)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    def zero_state(self, batch_size, dtype):
        with ops.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            if self._state_is_tuple:
                return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)
            return _zero_state_tensors(self.state_size, batch_size, dtype)

    @property
    def trainable_weights(self):
        out = []
        for c in self._cells:
            out.extend(c.trainable_weights)
        return out

    def call(self, inputs, state):
        cur_state_pos = 0
        cur_inp = inputs
        new_states = []
        for i, cell in enumerate(self._cells):
            with vs.variable_scope("cell_%d" % i):
                if self._state_is_tuple:
                    cur_state = state[i]
                else:
                    cur_state = array_ops.slice(state, [0, cur_state_pos], [-1, cell.state_size])
                    cur_state_pos += cell.state_size
                cur_inp, new_state = cell(cur_inp, cur_state)
                new_states.append(new_state)
        new_states = tuple(new_states) if self._state_is_tuple else array_ops.concat(new_states, 1)
        return cur_inp, new_states


class _Wrapper(RNNCell):
    """A cell around another: its variables stay the wrapped cell's (no scope of its own)."""

    def __init__(self, cell):
        super().__init__()
        self._cell = cell

    @property
    def wrapped_cell(self):
        return self._cell

    @property
    def state_size(self):
        return self._cell.state_size

    @property
    def output_size(self):
        return self._cell.output_size

    @property
    def trainable_weights(self):
        return self._cell.trainable_weights

    def zero_state(self, batch_size, dtype):
        with ops.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            return self._cell.zero_state(batch_size, dtype)


def _default_dropout_state_filter(substate):
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)  # the memory cell is never dropped
    return True


class DropoutWrapper(_Wrapper):
    """Dropout on the inputs, outputs and state of the given cell (keep probabilities, each
    element scaled by 1 / keep_prob). variational_recurrent is not supported."""

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None):
        super().__init__(cell)
        if variational_recurrent:
            raise NotImplementedError("dflow's DropoutWrapper does not support variational_recurrent")
        for name, p in (("input_keep_prob", input_keep_prob), ("output_keep_prob", output_keep_prob),
                        ("state_keep_prob", state_keep_prob)):
            if isinstance(p, (int, float)) and not 0.0 < float(p) <= 1.0:
                raise ValueError("Parameter %s must be between 0 and 1: %r" % (name, p))
        self._input_keep_prob = input_keep_prob
        self._output_keep_prob = output_keep_prob
        self._state_keep_prob = state_keep_prob
        self._seed = seed
        self._filter = dropout_state_filter_visitor or _default_dropout_state_filter

    @staticmethod
    def _should_dropout(p):
        return (not isinstance(p, (int, float))) or p < 1

    def _dropout(self, values, keep_prob, salt):
        flat = _flatten(values)
        out = []
        for i, v in enumerate(flat):
            seed = None if self._seed is None else (self._seed + salt * 1000 + i) % (2 ** 31)
            out.append(nn_ops.dropout(v, keep_prob=keep_prob, seed=seed))
        return _pack_as(values, out) if _is_seq(values) else out[0]

    def __call__(self, inputs, state, scope=None):
        if self._should_dropout(self._input_keep_prob):
            inputs = self._dropout(inputs, self._input_keep_prob, 1)
        output, new_state = self._cell(inputs, state, scope=scope)
        if self._should_dropout(self._state_keep_prob):
            new_state = self._dropout_state(new_state)
        if self._should_dropout(self._output_keep_prob):
            output = self._dropout(output, self._output_keep_prob, 3)
        return output, new_state

    def _dropout_state(self, state):
        def rec(s):
            keep = self._filter(s)
            if isinstance(keep, tuple) and _is_seq(s):
                parts = [rec_part(x, k) for x, k in zip(s, keep)]
                return type(s)(*parts) if hasattr(s, "_fields") else type(s)(parts)
            if _is_seq(s):
                parts = [rec(x) for x in s]
                return type(s)(*parts) if hasattr(s, "_fields") else type(s)(parts)
            return self._dropout(s, self._state_keep_prob, 2) if keep else s

        def rec_part(x, k):
            return self._dropout(x, self._state_keep_prob, 2) if k else x
        return rec(state)


class ResidualWrapper(_Wrapper):
    """Adds the inputs to the wrapped cell's outputs (or combines them with residual_fn)."""

    def __init__(self, cell, residual_fn=None):
        super().__init__(cell)
        self._residual_fn = residual_fn

    def __call__(self, inputs, state, scope=None):
        outputs, new_state = self._cell(inputs, state, scope=scope)
        if self._residual_fn is not None:
            return self._residual_fn(inputs, outputs), new_state
        flat = [i + o for i, o in zip(_flatten(inputs), _flatten(outputs))]
        return (_pack_as(outputs, flat) if _is_seq(outputs) else flat[0]), new_state


class DeviceWrapper(_Wrapper):
    """Runs the wrapped cell on `device`."""

    def __init__(self, cell, device):
        super().__init__(cell)
        self._device = device

    def zero_state(self, batch_size, dtype):
        with ops.device(self._device):
            return super().zero_state(batch_size, dtype)

    def __call__(self, inputs, state, scope=None):
        with ops.device(self._device):
            return self._cell(inputs, state, scope=scope)
