"""tf.nn.dynamic_rnn, tf.nn.bidirectional_dynamic_rnn and tf.nn.static_rnn (TensorFlow 1.x's graphs: a tf.while_loop over
TensorArrays for dynamic_rnn, with TensorFlow's sequence_length rule — past each row's length
the output is zeros and the state is copied through)."""
from dflow.framework import dtypes
from dflow.framework import ops
from dflow.framework import tensor_shape
from dflow.ops import array_ops
from dflow.ops import control_flow_ops
from dflow.ops import math_ops
from dflow.ops import variable_scope as vs
from dflow.ops.rnn_cell_impl import _flatten, _is_seq, _pack_as, _size_list
from dflow.ops.tensor_array_ops import TensorArray

__all__ = ["dynamic_rnn", "static_rnn", "bidirectional_dynamic_rnn"]


def _transpose_batch_time(x):
    """[batch, time, ...] <-> [time, batch, ...]."""
    x_static_shape = x.shape
    if x_static_shape.ndims is not None and x_static_shape.ndims < 2:
        raise ValueError("Expected input tensor %s to have rank at least 2, but saw shape: %s" %
                         (x, x_static_shape))
    x_rank = array_ops.rank(x) if x_static_shape.ndims is None else x_static_shape.ndims
    if isinstance(x_rank, int):
        perm = [1, 0] + list(range(2, x_rank))
    else:
        perm = array_ops.concat([[1, 0], math_ops.range(2, x_rank)], 0)
    x_t = array_ops.transpose(x, perm)
    if x_static_shape.ndims is not None:
        dims = x_static_shape.dims
        x_t.set_shape(tensor_shape.TensorShape([dims[1], dims[0]] + list(dims[2:])))
    return x_t


def _best_effort_input_batch_size(flat_input):
    for input_ in flat_input:
        shape = input_.shape
        if shape.ndims is None:
            continue
        if shape.ndims < 2:
            raise ValueError("Expected input tensor %s to have rank at least 2" % input_)
        batch_size = tensor_shape.dimension_value(shape[1])
        if batch_size is not None:
            return batch_size
    return array_ops.shape(flat_input[0])[1]


def _infer_state_dtype(explicit_dtype, state):
    if explicit_dtype is not None:
        return explicit_dtype
    flat = _flatten(state)
    if not flat:
        raise ValueError("Unable to infer dtype from empty state.")
    return flat[0].dtype


def _zeros(batch_size, size, dtype):
    dims = _size_list(size)
    if isinstance(batch_size, int):
        return array_ops.zeros([batch_size] + dims, dtype=dtype)
    shape = array_ops.concat([array_ops.reshape(batch_size, [1]), ops.convert_to_tensor(dims, dtype=dtypes.int32)],
                             0)
    z = array_ops.zeros(shape, dtype=dtype)
    z.set_shape([None] + dims)
    return z


def _copy_through(copy_cond, old, new):
    """Rows where copy_cond is true keep `old`, the others take `new` (TensorFlow's _rnn_step)."""
    if new.shape.ndims == 0:
        return new
    out = array_ops.where(copy_cond, old, new)
    out.set_shape(new.shape)
    return out


def _dynamic_rnn_loop(cell, inputs, initial_state, parallel_iterations, sequence_length, dtype):
    state = initial_state
    flat_input = _flatten(inputs)
    flat_output_size = _flatten(cell.output_size) if _is_seq(cell.output_size) else [cell.output_size]
    input_shape = array_ops.shape(flat_input[0])
    time_steps = input_shape[0]
    batch_size = _best_effort_input_batch_size(flat_input)
    inputs_got_shape = tuple(tensor_shape.as_shape(x.shape).with_rank_at_least(3) for x in flat_input)
    const_time_steps, const_batch_size = inputs_got_shape[0].as_list()[:2]
    for shape in inputs_got_shape:
        if not shape[2:].is_fully_defined():
            raise ValueError("Input size (depth of inputs) must be accessible via shape inference, but saw value "
                             "None.")
        got_time_steps, got_batch_size = shape.as_list()[:2]
        if const_time_steps != got_time_steps:
            raise ValueError("Time steps is not the same for all the elements in the input in a batch.")
        if const_batch_size != got_batch_size:
            raise ValueError("Batch_size is not the same for all the elements in the input.")
    out_dtype = _infer_state_dtype(dtype, state)
    flat_zero_output = [_zeros(batch_size, size, out_dtype) for size in flat_output_size]
    if sequence_length is not None:
        max_sequence_length = math_ops.reduce_max(sequence_length)
    else:
        max_sequence_length = time_steps
    time = array_ops.constant(0, dtype=dtypes.int32, name="time")
    with ops.name_scope("dynamic_rnn") as scope:
        base_name = scope

    def _create_ta(name, element_shape, dtype_):
        return TensorArray(dtype=dtype_, size=time_steps, element_shape=element_shape,
                           tensor_array_name=base_name + name)

    output_ta = tuple(
        _create_ta("output_%d" % i, tensor_shape.TensorShape([const_batch_size]).concatenate(_size_list(size)),
                   out_dtype)
        for i, size in enumerate(flat_output_size))
    input_ta = tuple(_create_ta("input_%d" % i, x.shape[1:], x.dtype) for i, x in enumerate(flat_input))
    input_ta = tuple(ta.unstack(x) for ta, x in zip(input_ta, flat_input))

    def _time_step(time, output_ta_t, state):
        input_t = tuple(ta.read(time) for ta in input_ta)
        for input_, shape in zip(input_t, inputs_got_shape):
            input_.set_shape(shape[1:])
        input_t = _pack_as(inputs, input_t) if _is_seq(inputs) else input_t[0]
        output, new_state = cell(input_t, state)
        flat_output = _flatten(output)
        if sequence_length is not None:
            copy_cond = time >= sequence_length
            flat_output = [_copy_through(copy_cond, z, o) for z, o in zip(flat_zero_output, flat_output)]
            flat_state = _flatten(state)
            flat_new = [_copy_through(copy_cond, s, n) for s, n in zip(flat_state, _flatten(new_state))]
            new_state = _pack_as(state, flat_new) if _is_seq(state) else flat_new[0]
        output_ta_t = tuple(ta.write(time, out) for ta, out in zip(output_ta_t, flat_output))
        return (time + 1, output_ta_t, new_state)

    loop_bound = math_ops.minimum(time_steps, math_ops.maximum(1, max_sequence_length))
    _, output_final_ta, final_state = control_flow_ops.while_loop(
        cond=lambda time, *_: time < loop_bound, body=_time_step, loop_vars=(time, output_ta, state),
        parallel_iterations=parallel_iterations, maximum_iterations=time_steps)
    final_outputs = tuple(ta.stack() for ta in output_final_ta)
    for output, size in zip(final_outputs, flat_output_size):
        output.set_shape(tensor_shape.TensorShape([const_time_steps, const_batch_size]).concatenate(_size_list(size)))
    final_outputs = _pack_as(cell.output_size, final_outputs) if _is_seq(cell.output_size) else final_outputs[0]
    return final_outputs, final_state


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None, parallel_iterations=None,
                swap_memory=False, time_major=False, scope=None):
    """Creates a recurrent neural network specified by RNNCell `cell` (tf.nn.dynamic_rnn).

    Returns (outputs, state): outputs [batch, time, output_size] ([time, batch, ...] when
    time_major), state the final state. swap_memory is accepted and has no effect."""
    with vs.variable_scope(scope or "rnn"):
        flat_input = [ops.convert_to_tensor(x) for x in _flatten(inputs)]
        if not time_major:
            flat_input = [_transpose_batch_time(x) for x in flat_input]
        parallel_iterations = parallel_iterations or 32
        if sequence_length is not None:
            sequence_length = math_ops.cast(sequence_length, dtypes.int32)
            if sequence_length.shape.ndims not in (None, 1):
                raise ValueError("sequence_length must be a vector of length batch_size, but saw shape: %s" %
                                 sequence_length.shape)
            sequence_length = array_ops.identity(sequence_length, name="sequence_length")
        batch_size = _best_effort_input_batch_size(flat_input)
        if initial_state is not None:
            state = initial_state
        else:
            if not dtype:
                raise ValueError("If there is no initial_state, you must give a dtype.")
            state = cell.zero_state(batch_size, dtype)
        inputs = _pack_as(inputs, flat_input) if _is_seq(inputs) else flat_input[0]
        outputs, final_state = _dynamic_rnn_loop(cell, inputs, state, parallel_iterations, sequence_length, dtype)
        if not time_major:
            if _is_seq(outputs):
                outputs = _pack_as(outputs, [_transpose_batch_time(o) for o in _flatten(outputs)])
            else:
                outputs = _transpose_batch_time(outputs)
        return outputs, final_state


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """Creates a recurrent neural network specified by RNNCell `cell`, unrolled over the list
    `inputs` (tf.nn.static_rnn). Returns (outputs list, final state)."""
    if not _is_seq(inputs):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    outputs = []
    with vs.variable_scope(scope or "rnn"):
        first = ops.convert_to_tensor(_flatten(inputs[0])[0])
        batch_size = tensor_shape.dimension_value(first.shape[0]) if first.shape.ndims else None
        if batch_size is None:
            batch_size = array_ops.shape(first)[0]
        if initial_state is not None:
            state = initial_state
        else:
            if not dtype:
                raise ValueError("If no initial_state is provided, dtype must be specified")
            state = cell.zero_state(batch_size, dtype)
        if sequence_length is not None:
            sequence_length = math_ops.cast(sequence_length, dtypes.int32)
            sequence_length = array_ops.identity(sequence_length, name="sequence_length")
            zero_output = _zeros(batch_size, cell.output_size, _infer_state_dtype(dtype, state))
        for time, input_ in enumerate(inputs):
            output, new_state = cell(input_, state)
            if sequence_length is not None:
                copy_cond = time >= sequence_length
                output = _copy_through(copy_cond, zero_output, output)
                flat_new = [_copy_through(copy_cond, s, n) for s, n in zip(_flatten(state), _flatten(new_state))]
                new_state = _pack_as(state, flat_new) if _is_seq(state) else flat_new[0]
            state = new_state
            outputs.append(output)
        return outputs, state


def _reverse(input_, seq_lengths, seq_axis, batch_axis):
    if seq_lengths is not None:
        return array_ops.reverse_sequence(input_, seq_lengths, seq_axis=seq_axis, batch_axis=batch_axis)
    return array_ops.reverse(input_, axis=[seq_axis])


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None, initial_state_fw=None,
                              initial_state_bw=None, dtype=None, parallel_iterations=None, swap_memory=False,
                              time_major=False, scope=None):
    """A forward and a backward dynamic_rnn over `inputs` (the backward one on the inputs reversed
    within each row's length). Returns ((output_fw, output_bw), (state_fw, state_bw))."""
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, output_state_fw = dynamic_rnn(
                cell=cell_fw, inputs=inputs, sequence_length=sequence_length, initial_state=initial_state_fw,
                dtype=dtype, parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                time_major=time_major, scope=fw_scope)
        time_axis, batch_axis = (0, 1) if time_major else (1, 0)
        with vs.variable_scope("bw") as bw_scope:
            def _map_reverse(inp):
                return _reverse(inp, sequence_length, time_axis, batch_axis)
            inputs_reverse = _pack_as(inputs, [_map_reverse(x) for x in _flatten(inputs)]) if _is_seq(inputs) \
                else _map_reverse(inputs)
            tmp, output_state_bw = dynamic_rnn(
                cell=cell_bw, inputs=inputs_reverse, sequence_length=sequence_length, initial_state=initial_state_bw,
                dtype=dtype, parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                time_major=time_major, scope=bw_scope)
    output_bw = _reverse(tmp, sequence_length, time_axis, batch_axis)
    return (output_fw, output_bw), (output_state_fw, output_state_bw)
