"""tf.losses (tf.compat.v1.losses): per-element losses weighted and reduced as TensorFlow 1.x
reduces them, added to the LOSSES collection."""
from dflow.framework import dtypes
from dflow.framework import ops
from dflow.losses import util
from dflow.ops import array_ops
from dflow.ops import math_ops
from dflow.ops import nn_ops

GraphKeys = ops.GraphKeys


class Reduction:
    """How a weighted loss is reduced to the value returned."""

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE, cls.SUM_OVER_NONZERO_WEIGHTS,
                cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError("Invalid Reduction Key %s. Key should be one of %s." % (key, cls.all()))


def _safe_mean(losses, num_present):
    total_loss = math_ops.reduce_sum(losses)
    return nn_ops.div_no_nan(total_loss, num_present, name="value")


def _num_elements(losses):
    with ops.name_scope(None, "num_elements", values=[losses]) as scope:
        return math_ops.cast(array_ops.size(losses, name=scope), dtype=losses.dtype)


def _num_present(losses, weights, per_batch=False):
    if isinstance(weights, float) and weights != 0.0:
        return _num_elements(losses)
    with ops.name_scope(None, "num_present", (losses, weights)) as scope:
        weights = math_ops.cast(weights, dtype=dtypes.float32)
        present = array_ops.where(math_ops.equal(weights, 0.0), array_ops.zeros_like(weights),
                                  array_ops.ones_like(weights))
        present = util.broadcast_weights(present, losses)
        if per_batch:
            return math_ops.reduce_sum(present, axis=math_ops.range(1, array_ops.rank(present)), keepdims=True,
                                       name=scope)
        return math_ops.reduce_sum(present, name=scope)


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """losses * weights, reduced by `reduction`, cast back to losses' dtype and added to
    loss_collection. weights must broadcast to losses (a scalar, or each dimension 1 or losses')."""
    Reduction.validate(reduction)
    with ops.name_scope(scope, "weighted_loss", (losses, weights)):
        ops.get_default_graph()._last_loss_reduction = reduction
        with ops.control_dependencies((util.assert_broadcastable(weights, losses),)):
            losses = ops.convert_to_tensor(losses)
            input_dtype = losses.dtype.base_dtype
            losses = math_ops.cast(losses, dtype=dtypes.float32)
            weights = math_ops.cast(weights, dtype=dtypes.float32)
            weighted_losses = math_ops.multiply(losses, weights)
            if reduction == Reduction.NONE:
                loss = weighted_losses
            else:
                loss = math_ops.reduce_sum(weighted_losses)
                if reduction == Reduction.MEAN:
                    loss = _safe_mean(loss, math_ops.reduce_sum(array_ops.ones_like(losses) * weights))
                elif reduction in (Reduction.SUM_BY_NONZERO_WEIGHTS, Reduction.SUM_OVER_NONZERO_WEIGHTS):
                    loss = _safe_mean(loss, _num_present(losses, weights))
                elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                    loss = _safe_mean(loss, _num_elements(losses))
            loss = math_ops.cast(loss, input_dtype)
            util.add_loss(loss, loss_collection)
            return loss


def _check_args(labels_name, labels, predictions_name, predictions):
    if labels is None:
        raise ValueError("Argument `%s` must not be None." % labels_name)
    if predictions is None:
        raise ValueError("Argument `%s` must not be None." % predictions_name)


def _float_pair(predictions, labels):
    """predictions and labels as float32, their static shapes checked compatible (ValueError)."""
    predictions = math_ops.cast(predictions, dtype=dtypes.float32)
    labels = math_ops.cast(labels, dtype=dtypes.float32)
    predictions.shape.assert_is_compatible_with(labels.shape)
    return predictions, labels


def absolute_difference(labels, predictions, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """|predictions - labels|, weighted and reduced."""
    _check_args("labels", labels, "predictions", predictions)
    with ops.name_scope(scope, "absolute_difference", (predictions, labels, weights)) as scope:
        predictions, labels = _float_pair(predictions, labels)
        losses = math_ops.abs(math_ops.subtract(predictions, labels))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS, dim=None):
    """1 - sum(labels * predictions, axis) for unit-normalized labels and predictions."""
    axis = nn_ops._lookup("axis", axis, "dim", dim)
    if axis is None:
        raise ValueError("You must specify argument `axis`.")
    _check_args("labels", labels, "predictions", predictions)
    with ops.name_scope(scope, "cosine_distance_loss", (predictions, labels, weights)) as scope:
        predictions, labels = _float_pair(predictions, labels)
        radial_diffs = math_ops.multiply(predictions, labels)
        losses = 1 - math_ops.reduce_sum(radial_diffs, axis=(axis,), keepdims=True)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """relu(1 - (2 * labels - 1) * logits) for labels in {0, 1}."""
    _check_args("labels", labels, "logits", logits)
    with ops.name_scope(scope, "hinge_loss", (logits, labels, weights)) as scope:
        logits = math_ops.cast(logits, dtype=dtypes.float32)
        labels = math_ops.cast(labels, dtype=dtypes.float32)
        logits.shape.assert_is_compatible_with(labels.shape)
        all_ones = array_ops.ones_like(labels)
        labels = math_ops.subtract(2 * labels, all_ones)
        losses = nn_ops.relu(math_ops.subtract(all_ones, math_ops.multiply(labels, logits)))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """0.5 * x^2 for |x| <= delta, else delta * (|x| - 0.5 * delta), x = predictions - labels."""
    _check_args("labels", labels, "predictions", predictions)
    with ops.name_scope(scope, "huber_loss", (predictions, labels, weights)) as scope:
        predictions, labels = _float_pair(predictions, labels)
        error = math_ops.subtract(predictions, labels)
        abs_error = math_ops.abs(error)
        quadratic = math_ops.minimum(abs_error, delta)
        linear = math_ops.subtract(abs_error, quadratic)
        losses = math_ops.add(
            math_ops.multiply(ops.convert_to_tensor(0.5, dtype=quadratic.dtype), math_ops.multiply(quadratic,
                                                                                                 quadratic)),
            math_ops.multiply(delta, linear))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None, loss_collection=GraphKeys.LOSSES,
             reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """-labels * log(predictions + epsilon) - (1 - labels) * log(1 - predictions + epsilon)."""
    _check_args("labels", labels, "predictions", predictions)
    with ops.name_scope(scope, "log_loss", (predictions, labels, weights)) as scope:
        predictions, labels = _float_pair(predictions, labels)
        losses = -math_ops.multiply(labels, math_ops.log(predictions + epsilon)) - math_ops.multiply(
            (1 - labels), math_ops.log(1 - predictions + epsilon))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES):
    """The mean over pairs of elements (within each example) of the squared difference of their
    differences."""
    _check_args("labels", labels, "predictions", predictions)
    with ops.name_scope(scope, "mean_pairwise_squared_error", (predictions, labels, weights)) as scope:
        weights = math_ops.cast(weights, dtype=dtypes.float32)
        labels = math_ops.cast(labels, dtype=dtypes.float32)
        with ops.control_dependencies((util.assert_broadcastable(weights, labels),)):
            predictions = math_ops.cast(predictions, dtype=dtypes.float32)
            predictions.shape.assert_is_compatible_with(labels.shape)
            diffs = math_ops.subtract(predictions, labels)
            axis = math_ops.range(1, array_ops.rank(diffs))
            sum_squares_diff_per_batch = math_ops.reduce_sum(math_ops.square(diffs), axis=axis, keepdims=True)
            num_present_per_batch = _num_present(diffs, weights, per_batch=True)
            term1 = 2.0 * nn_ops.div_no_nan(sum_squares_diff_per_batch,
                                            math_ops.maximum(num_present_per_batch - 1, 0), name="value")
            sum_diff = math_ops.reduce_sum(diffs, axis=axis, keepdims=True)
            term2 = 2.0 * nn_ops.div_no_nan(math_ops.square(sum_diff), math_ops.maximum(
                math_ops.multiply(num_present_per_batch, num_present_per_batch - 1), 0), name="value")
            weighted_losses = math_ops.multiply(term1 - term2, weights)
            loss = math_ops.reduce_sum(weighted_losses)
            mean_loss = array_ops.where(math_ops.reduce_sum(num_present_per_batch) > 0, loss,
                                        array_ops.zeros_like(loss), name="value")
            util.add_loss(mean_loss, loss_collection)
            return mean_loss


def mean_squared_error(labels, predictions, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """(predictions - labels)^2, weighted and reduced."""
    _check_args("labels", labels, "predictions", predictions)
    with ops.name_scope(scope, "mean_squared_error", (predictions, labels, weights)) as scope:
        predictions, labels = _float_pair(predictions, labels)
        losses = math_ops.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def _logits_and_labels(logits, labels):
    """logits as a tensor and labels cast to its dtype, their static shapes checked compatible."""
    logits = ops.convert_to_tensor(logits)
    labels = math_ops.cast(labels, logits.dtype)
    logits.shape.assert_is_compatible_with(labels.shape)
    return logits, labels


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """sigmoid_cross_entropy_with_logits; labels smoothed towards 1/2 by label_smoothing."""
    _check_args("multi_class_labels", multi_class_labels, "logits", logits)
    with ops.name_scope(scope, "sigmoid_cross_entropy_loss", (logits, multi_class_labels, weights)) as scope:
        logits, multi_class_labels = _logits_and_labels(logits, multi_class_labels)
        if label_smoothing > 0:
            multi_class_labels = (multi_class_labels * (1 - label_smoothing) + 0.5 * label_smoothing)
        losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=multi_class_labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """softmax cross entropy per example; labels smoothed towards 1/num_classes by label_smoothing."""
    _check_args("onehot_labels", onehot_labels, "logits", logits)
    with ops.name_scope(scope, "softmax_cross_entropy_loss", (logits, onehot_labels, weights)) as scope:
        logits, onehot_labels = _logits_and_labels(logits, onehot_labels)
        if label_smoothing > 0:
            num_classes = math_ops.cast(array_ops.shape(onehot_labels)[-1], logits.dtype)
            smooth_positives = 1.0 - label_smoothing
            smooth_negatives = label_smoothing / num_classes
            onehot_labels = onehot_labels * smooth_positives + smooth_negatives
        onehot_labels = array_ops.stop_gradient(onehot_labels, name="labels_stop_gradient")
        losses = nn_ops.softmax_cross_entropy_with_logits_v2(labels=onehot_labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def _remove_squeezable_dimensions(labels, predictions, weights=None, expected_rank_diff=0):
    labels, predictions = util.remove_squeezable_dimensions(labels, predictions,
                                                            expected_rank_diff=expected_rank_diff)
    if weights is not None:
        weights = ops.convert_to_tensor(weights)
        labels_rank = labels.shape.ndims
        weights_shape = weights.shape
        weights_rank = weights_shape.ndims
        if labels_rank is not None and weights_rank is not None:
            rank_diff = weights_rank - labels_rank
            if rank_diff == 1:
                weights = array_ops.squeeze(weights, [-1])
            return labels, predictions, weights
        rank_diff = array_ops.rank(weights) - array_ops.rank(labels)
        if weights_rank is None or (weights_rank > 0 and weights_shape.dims[-1] in (None, 1)):
            weights = util._cond(math_ops.equal(1, rank_diff), lambda: array_ops.squeeze(weights, [-1]),
                                 lambda: weights)
    return labels, predictions, weights


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """sparse_softmax_cross_entropy_with_logits per example (labels [batch] or [batch, 1])."""
    _check_args("labels", labels, "logits", logits)
    with ops.name_scope(scope, "sparse_softmax_cross_entropy_loss", (logits, labels, weights)) as scope:
        labels, logits, weights = _remove_squeezable_dimensions(labels, logits, weights, expected_rank_diff=1)
        losses = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)
