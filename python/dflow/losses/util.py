"""The LOSSES collection (add_loss, get_losses, get_total_loss, ...) and the weight helpers
tf.losses and tf.metrics share (TensorFlow's weights_broadcast_ops and
confusion_matrix.remove_squeezable_dimensions)."""
import numpy as np

from dflow.framework import dtypes
from dflow.framework import ops
from dflow.ops import array_ops
from dflow.ops import math_ops

GraphKeys = ops.GraphKeys

_ASSERT_BROADCASTABLE_ERROR_PREFIX = "weights can not be broadcast to values."


def add_loss(loss, loss_collection=GraphKeys.LOSSES):
    """Adds loss to loss_collection (none when loss_collection is None or empty)."""
    if loss_collection:
        ops.add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES):
    return ops.get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    return ops.get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    return array_ops.constant(0.0)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope=scope)
    return math_ops.add_n(losses, name=name)


def _static_shape(t):
    s = t.shape
    return s.as_list() if s.is_fully_defined() else None


def apply_no_op(name):
    return ops.apply_op("NoOp", name, [])


def assert_broadcastable(weights, values):
    """An op that fails the run when weights cannot broadcast to values (weights a scalar, or of
    values' rank with each dimension 1 or values'); ValueError at once when the shapes say so."""
    with ops.name_scope(None, "assert_broadcastable", (weights, values)) as scope:
        with ops.name_scope(None, "weights", (weights,)) as weights_scope:
            weights = ops.convert_to_tensor(weights, name=weights_scope)
            weights_shape = array_ops.shape(weights, name="shape")
            weights_rank = array_ops.rank(weights, name="rank")
        weights_rank_static = weights.shape.ndims
        with ops.name_scope(None, "values", (values,)) as values_scope:
            values = ops.convert_to_tensor(values, name=values_scope)
            values_shape = array_ops.shape(values, name="shape")
            values_rank = array_ops.rank(values, name="rank")
        values_rank_static = values.shape.ndims
        if weights_rank_static is not None and values_rank_static is not None:
            if weights_rank_static == 0:
                return apply_no_op("static_scalar_check_success")
            if weights_rank_static != values_rank_static:
                raise ValueError("%s values.rank=%s. weights.rank=%s. values.shape=%s. weights.shape=%s. Received "
                                 "weights=%s, values=%s" % (_ASSERT_BROADCASTABLE_ERROR_PREFIX, values_rank_static,
                                                            weights_rank_static, values.shape, weights.shape,
                                                            weights, values))
            weights_shape_static = _static_shape(weights)
            values_shape_static = _static_shape(values)
            if weights_shape_static is not None and values_shape_static is not None:
                for i in range(len(values_shape_static)):
                    if weights_shape_static[i] not in (1, values_shape_static[i]):
                        raise ValueError("%s Mismatch at dim %d. values.shape=%s, weights.shape=%s. Received "
                                         "weights=%s, values=%s" % (_ASSERT_BROADCASTABLE_ERROR_PREFIX, i,
                                                                    values_shape_static, weights_shape_static,
                                                                    weights, values))
                return apply_no_op("static_dims_check_success")
        # Checked while running: a scalar, or the same rank with each dimension 1 or values'. The
        # shapes are padded to one length (with sizes no dimension has) so that comparing them
        # cannot fail when the ranks differ.
        is_scalar = math_ops.equal(0, weights_rank, name="is_scalar")
        with ops.name_scope(None, "is_valid_shape"):
            is_same_rank = math_ops.equal(values_rank, weights_rank, name="is_same_rank")
            w_pad = array_ops.stack([array_ops.stack([0, math_ops.maximum(values_rank - weights_rank, 0)])])
            v_pad = array_ops.stack([array_ops.stack([0, math_ops.maximum(weights_rank - values_rank, 0)])])
            ws = ops.apply_op("PadV2", None, [weights_shape, w_pad, np.int32(-1)])
            vs = ops.apply_op("PadV2", None, [values_shape, v_pad, np.int32(-2)])
            dims_ok = math_ops.reduce_min(math_ops.cast(
                math_ops.logical_or(math_ops.equal(ws, 1), math_ops.equal(ws, vs)), dtypes.int32))
            dims_ok = math_ops.logical_or(math_ops.equal(array_ops.size(ws), 0), math_ops.equal(dims_ok, 1))
            is_valid_shape = math_ops.logical_or(is_scalar, math_ops.logical_and(is_same_rank, dims_ok))
        data = [_ASSERT_BROADCASTABLE_ERROR_PREFIX, "weights.shape=", weights.name, weights_shape, "values.shape=",
                values.name, values_shape, "is_scalar=", is_scalar]
        return ops.apply_op("Assert", scope, [is_valid_shape, data])


def broadcast_weights(weights, values):
    """weights broadcast to values' shape (checked as assert_broadcastable checks)."""
    with ops.name_scope(None, "broadcast_weights", (weights, values)) as scope:
        values = ops.convert_to_tensor(values, name="values")
        weights = ops.convert_to_tensor(weights, dtype=values.dtype.base_dtype, name="weights")
        weights_shape = weights.shape
        values_shape = values.shape
        if weights_shape.is_fully_defined() and values_shape.is_fully_defined() and \
                weights_shape.is_compatible_with(values_shape):
            return weights
        with ops.control_dependencies((assert_broadcastable(weights, values),)):
            return math_ops.multiply(weights, array_ops.ones_like(values), name=scope)


def _cond(pred, true_fn, false_fn):
    import dflow
    return dflow.cond(pred, true_fn, false_fn)


def _last_dim_maybe_one(shape):
    return shape.ndims is None or shape.dims[-1] is None or shape.dims[-1] == 1


def remove_squeezable_dimensions(labels, predictions, expected_rank_diff=0, name=None):
    """Squeezes a last dimension of size 1 from labels or predictions when their ranks differ by
    one more (or one less) than expected_rank_diff."""
    with ops.name_scope(name, "remove_squeezable_dimensions", [labels, predictions]):
        predictions = ops.convert_to_tensor(predictions)
        labels = ops.convert_to_tensor(labels)
        predictions_shape = predictions.shape
        predictions_rank = predictions_shape.ndims
        labels_shape = labels.shape
        labels_rank = labels_shape.ndims
        if labels_rank is not None and predictions_rank is not None:
            rank_diff = predictions_rank - labels_rank
            if rank_diff == expected_rank_diff + 1 and _last_dim_maybe_one(predictions_shape):
                predictions = array_ops.squeeze(predictions, [-1])
            elif rank_diff == expected_rank_diff - 1 and _last_dim_maybe_one(labels_shape):
                labels = array_ops.squeeze(labels, [-1])
            return labels, predictions
        rank_diff = array_ops.rank(predictions) - array_ops.rank(labels)
        if predictions_rank is None or _last_dim_maybe_one(predictions_shape):
            predictions = _cond(math_ops.equal(expected_rank_diff + 1, rank_diff),
                                lambda: array_ops.squeeze(predictions, [-1]), lambda: predictions)
        if labels_rank is None or _last_dim_maybe_one(labels_shape):
            labels = _cond(math_ops.equal(expected_rank_diff - 1, rank_diff),
                           lambda: array_ops.squeeze(labels, [-1]), lambda: labels)
        return labels, predictions
