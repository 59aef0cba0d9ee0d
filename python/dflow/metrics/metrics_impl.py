"""tf.metrics (tf.compat.v1.metrics): streaming metrics as TensorFlow 1.x's Python layer builds
them. Each keeps running totals in local variables (LOCAL_VARIABLES and METRIC_VARIABLES, not
trainable) under the metric's variable scope ("accuracy/total", "accuracy/count") and returns
(value, update_op): value reads the totals, update_op adds a batch and gives the metric with it.
Initialize the totals with tf.local_variables_initializer()."""
from dflow.framework import dtypes
from dflow.framework import ops
from dflow.losses import util as weights_util
from dflow.ops import array_ops
from dflow.ops import math_ops
from dflow.ops import nn_ops

GraphKeys = ops.GraphKeys


def _vs():
    from dflow.ops import variable_scope
    return variable_scope


def _variables():
    from dflow.ops import variables
    return variables


def _check():
    from dflow.ops import control_flow_ops
    return control_flow_ops


def metric_variable(shape, dtype, validate_shape=True, name=None):
    """A local float variable of zeros for a metric's totals."""
    v = _variables()
    return v.Variable(lambda: array_ops.zeros(shape, dtype), trainable=False,
                      collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
                      validate_shape=validate_shape, synchronization=v.VariableSynchronization.ON_READ,
                      aggregation=v.VariableAggregation.SUM, name=name)


def _assign_add(ref, value):
    return _variables().assign_add(ref, value)


def _remove_squeezable_dimensions(predictions, labels, weights):
    predictions = ops.convert_to_tensor(predictions)
    if labels is not None:
        labels, predictions = weights_util.remove_squeezable_dimensions(labels, predictions)
        predictions.shape.assert_is_compatible_with(labels.shape)
    if weights is None:
        return predictions, labels, None
    weights = ops.convert_to_tensor(weights)
    weights_shape = weights.shape
    weights_rank = weights_shape.ndims
    if weights_rank == 0:
        return predictions, labels, weights
    predictions_rank = predictions.shape.ndims
    if predictions_rank is not None and weights_rank is not None:
        if weights_rank - predictions_rank == 1:
            weights = array_ops.squeeze(weights, [-1])
        elif predictions_rank - weights_rank == 1:
            weights = array_ops.expand_dims(weights, -1)
    else:
        cond = _check().cond
        weights_rank_tensor = array_ops.rank(weights)
        rank_diff = weights_rank_tensor - array_ops.rank(predictions)

        def _maybe_expand_weights():
            return cond(math_ops.equal(rank_diff, -1), lambda: array_ops.expand_dims(weights, -1), lambda: weights)

        if weights_rank is not None and weights_shape.dims[-1] not in (None, 1):
            def maybe_squeeze_weights():
                return weights
        else:
            def maybe_squeeze_weights():
                return array_ops.squeeze(weights, [-1])

        def _maybe_adjust_weights():
            return cond(math_ops.equal(rank_diff, 1), maybe_squeeze_weights, _maybe_expand_weights)

        weights = cond(math_ops.equal(weights_rank_tensor, 0), lambda: weights, _maybe_adjust_weights)
    return predictions, labels, weights


def _aggregate(metrics_collections, fn, *args):
    value = fn(None, *args)
    if metrics_collections:
        ops.add_to_collections(metrics_collections, value)
    return value


def _read(v, collections):
    return _aggregate(collections, lambda _, x: array_ops.identity(x), v)


def _updates(updates_collections, update_op):
    if updates_collections:
        ops.add_to_collections(updates_collections, update_op)


def _mean_of(total, count, total_delta, values, num_values, metrics_collections, updates_collections):
    """mean and mean_tensor: adds total_delta to `total` and num_values to `count` (after `values`),
    then total / count as the value and the update op."""
    update_total_op = _assign_add(total, total_delta)
    with ops.control_dependencies([values]):
        update_count_op = _assign_add(count, num_values)
    mean_t = _aggregate(metrics_collections,
                        lambda _, t, c: nn_ops.div_no_nan(t, math_ops.maximum(c, 0), name="value"), total, count)
    update_op = nn_ops.div_no_nan(update_total_op, math_ops.maximum(update_count_op, 0), name="update_op")
    _updates(updates_collections, update_op)
    return mean_t, update_op


def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) mean of values."""
    with _vs().variable_scope(name, "mean", (values, weights)):
        values = math_ops.cast(values, dtypes.float32)
        total = metric_variable([], dtypes.float32, name="total")
        count = metric_variable([], dtypes.float32, name="count")
        if weights is None:
            num_values = math_ops.cast(array_ops.size(values), dtypes.float32)
        else:
            values, _, weights = _remove_squeezable_dimensions(predictions=values, labels=None, weights=weights)
            weights = weights_util.broadcast_weights(math_ops.cast(weights, dtypes.float32), values)
            values = math_ops.multiply(values, weights)
            num_values = math_ops.reduce_sum(weights)
        return _mean_of(total, count, math_ops.reduce_sum(values), values, num_values, metrics_collections,
                        updates_collections)


def mean_tensor(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The element-wise (weighted) mean of values over the batches."""
    with _vs().variable_scope(name, "mean", (values, weights)):
        values = math_ops.cast(values, dtypes.float32)
        total = metric_variable(values.shape, dtypes.float32, name="total_tensor")
        count = metric_variable(values.shape, dtypes.float32, name="count_tensor")
        num_values = array_ops.ones_like(values)
        if weights is not None:
            values, _, weights = _remove_squeezable_dimensions(predictions=values, labels=None, weights=weights)
            weights = weights_util.broadcast_weights(math_ops.cast(weights, dtypes.float32), values)
            values = math_ops.multiply(values, weights)
            num_values = math_ops.multiply(num_values, weights)
        return _mean_of(total, count, values, values, num_values, metrics_collections, updates_collections)


def accuracy(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """How often predictions equal labels."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions=predictions, labels=labels,
                                                                 weights=weights)
    predictions.shape.assert_is_compatible_with(labels.shape)
    if labels.dtype.base_dtype != predictions.dtype.base_dtype:
        predictions = math_ops.cast(predictions, labels.dtype.base_dtype)
    is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
    return mean(is_correct, weights, metrics_collections, updates_collections, name or "accuracy")


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                        name=None):
    predictions, labels, weights = _remove_squeezable_dimensions(predictions=predictions, labels=labels,
                                                                 weights=weights)
    absolute_errors = math_ops.abs(predictions - labels)
    return mean(absolute_errors, weights, metrics_collections, updates_collections, name or "mean_absolute_error")


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                       name=None):
    predictions, labels, weights = _remove_squeezable_dimensions(predictions=predictions, labels=labels,
                                                                 weights=weights)
    squared_error = math_ops.squared_difference(labels, predictions)
    return mean(squared_error, weights, metrics_collections, updates_collections, name or "mean_squared_error")


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                            name=None):
    predictions, labels, weights = _remove_squeezable_dimensions(predictions=predictions, labels=labels,
                                                                 weights=weights)
    mse, update_mse_op = mean_squared_error(labels, predictions, weights, None, None,
                                            name or "root_mean_squared_error")
    rmse = _aggregate(metrics_collections, lambda _, m: math_ops.sqrt(m), mse)
    update_rmse_op = math_ops.sqrt(update_mse_op)
    _updates(updates_collections, update_rmse_op)
    return rmse, update_rmse_op


def mean_relative_error(labels, predictions, normalizer, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    predictions, labels, weights = _remove_squeezable_dimensions(predictions=predictions, labels=labels,
                                                                 weights=weights)
    predictions, normalizer = weights_util.remove_squeezable_dimensions(predictions, normalizer)
    predictions.shape.assert_is_compatible_with(normalizer.shape)
    relative_errors = array_ops.where(math_ops.equal(normalizer, 0.0), array_ops.zeros_like(labels),
                                      math_ops.divide(math_ops.abs(labels - predictions), normalizer))
    return mean(relative_errors, weights, metrics_collections, updates_collections, name or "mean_relative_error")


def mean_cosine_distance(labels, predictions, dim, weights=None, metrics_collections=None, updates_collections=None,
                         name=None):
    predictions, labels, weights = _remove_squeezable_dimensions(predictions=predictions, labels=labels,
                                                                 weights=weights)
    radial_diffs = math_ops.multiply(predictions, labels)
    radial_diffs = math_ops.reduce_sum(radial_diffs, axis=[dim], keepdims=True)
    mean_distance, update_op = mean(radial_diffs, weights, None, None, name or "mean_cosine_distance")
    mean_distance = math_ops.subtract(1.0, mean_distance)
    update_op = math_ops.subtract(1.0, update_op)
    if metrics_collections:
        ops.add_to_collections(metrics_collections, mean_distance)
    _updates(updates_collections, update_op)
    return mean_distance, update_op


def percentage_below(values, threshold, weights=None, metrics_collections=None, updates_collections=None,
                     name=None):
    is_below_threshold = math_ops.cast(math_ops.less(values, threshold), dtypes.float32)
    return mean(is_below_threshold, weights, metrics_collections, updates_collections,
                name or "percentage_below_threshold")


# ---- counts, precision, recall ---------------------------------------------------------------


def _count_condition(values, weights=None, metrics_collections=None, updates_collections=None):
    if values.dtype.base_dtype != dtypes.bool:
        raise TypeError("%s must be of type bool; got %s" % (values.name, values.dtype.name))
    count = metric_variable([], dtypes.float32, name="count")
    values = math_ops.cast(values, dtypes.float32)
    if weights is not None:
        weights = math_ops.cast(weights, dtypes.float32)
        values = math_ops.multiply(values, weights)
    value_tensor = _read(count, metrics_collections)
    update_op = _assign_add(count, math_ops.reduce_sum(values))
    _updates(updates_collections, update_op)
    return value_tensor, update_op


def _bool_args(labels, predictions, weights):
    return _remove_squeezable_dimensions(predictions=math_ops.cast(predictions, dtype=dtypes.bool),
                                         labels=math_ops.cast(labels, dtype=dtypes.bool), weights=weights)


def _counter(default_name, label_value, prediction_value):
    def metric(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
        with _vs().variable_scope(name, default_name, (predictions, labels, weights)):
            predictions, labels, weights = _bool_args(labels, predictions, weights)
            is_condition = math_ops.logical_and(math_ops.equal(labels, label_value),
                                                math_ops.equal(predictions, prediction_value))
            return _count_condition(is_condition, weights, metrics_collections, updates_collections)
    metric.__name__ = default_name
    metric.__doc__ = "The (weighted) number of %s." % default_name.replace("_", " ")
    return metric


true_positives = _counter("true_positives", True, True)
false_positives = _counter("false_positives", False, True)
true_negatives = _counter("true_negatives", False, False)
false_negatives = _counter("false_negatives", True, False)


def _true_positive_ratio(default_name, other_counter, labels, predictions, weights, metrics_collections,
                         updates_collections, name):
    """true_positives / (true_positives + other), 0 when there are none: precision (other: the false
    positives) and recall (the false negatives)."""
    with _vs().variable_scope(name, default_name, (predictions, labels, weights)):
        predictions, labels, weights = _bool_args(labels, predictions, weights)
        true_p, true_positives_update_op = true_positives(labels, predictions, weights)
        other, other_update_op = other_counter(labels, predictions, weights)

        def compute_ratio(tp, o, name):
            return array_ops.where(math_ops.greater(tp + o, 0), math_ops.divide(tp, tp + o), 0, name)

        value = _aggregate(metrics_collections, lambda _, t, o: compute_ratio(t, o, "value"), true_p, other)
        update_op = compute_ratio(true_positives_update_op, other_update_op, "update_op")
        _updates(updates_collections, update_op)
        return value, update_op


def precision(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """true_positives / (true_positives + false_positives), 0 when there are none."""
    return _true_positive_ratio("precision", false_positives, labels, predictions, weights, metrics_collections,
                                updates_collections, name)


def recall(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """true_positives / (true_positives + false_negatives), 0 when there are none."""
    return _true_positive_ratio("recall", false_negatives, labels, predictions, weights, metrics_collections,
                                updates_collections, name)


# ---- at thresholds, AUC ----------------------------------------------------------------------


def _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights=None, includes=None):
    all_includes = ("tp", "fn", "tn", "fp")
    if includes is None:
        includes = all_includes
    else:
        for include in includes:
            if include not in all_includes:
                raise ValueError("Invalid key: %s" % include)
    check = _check()
    predictions = ops.convert_to_tensor(predictions)
    with ops.control_dependencies([
            check.assert_greater_equal(predictions, math_ops.cast(0.0, dtype=predictions.dtype),
                                       message="predictions must be in [0, 1]"),
            check.assert_less_equal(predictions, math_ops.cast(1.0, dtype=predictions.dtype),
                                    message="predictions must be in [0, 1]")]):
        predictions, labels, weights = _remove_squeezable_dimensions(
            predictions=math_ops.cast(predictions, dtypes.float32), labels=math_ops.cast(labels, dtype=dtypes.bool),
            weights=weights)
    num_thresholds = len(thresholds)
    predictions_2d = array_ops.reshape(predictions, [-1, 1])
    labels_2d = array_ops.reshape(math_ops.cast(labels, dtype=dtypes.bool), [1, -1])
    num_predictions = predictions_2d.shape.as_list()[0]
    if num_predictions is None:
        num_predictions = array_ops.gather(array_ops.shape(predictions_2d), 0)
    thresh_tiled = array_ops.tile(array_ops.expand_dims(array_ops.constant(thresholds, dtypes.float32), 1),
                                  array_ops.stack([1, num_predictions]))
    pred_is_pos = math_ops.greater(array_ops.tile(array_ops.transpose(predictions_2d), [num_thresholds, 1]),
                                   thresh_tiled)
    if "fn" in includes or "tn" in includes:
        pred_is_neg = math_ops.logical_not(pred_is_pos)
    label_is_pos = array_ops.tile(labels_2d, [num_thresholds, 1])
    if "fp" in includes or "tn" in includes:
        label_is_neg = math_ops.logical_not(label_is_pos)
    if weights is not None:
        weights = weights_util.broadcast_weights(math_ops.cast(weights, dtypes.float32), predictions)
        weights_tiled = array_ops.tile(array_ops.reshape(weights, [1, -1]), [num_thresholds, 1])
    else:
        weights_tiled = None
    values, update_ops = {}, {}

    def count(key, name, a, b):
        var = metric_variable([num_thresholds], dtypes.float32, name=name)
        is_it = math_ops.cast(math_ops.logical_and(a, b), dtypes.float32)
        if weights_tiled is not None:
            is_it *= weights_tiled
        update_ops[key] = _assign_add(var, math_ops.reduce_sum(is_it, 1))
        values[key] = var

    if "tp" in includes:
        count("tp", "true_positives", label_is_pos, pred_is_pos)
    if "fn" in includes:
        count("fn", "false_negatives", label_is_pos, pred_is_neg)
    if "tn" in includes:
        count("tn", "true_negatives", label_is_neg, pred_is_neg)
    if "fp" in includes:
        count("fp", "false_positives", label_is_neg, pred_is_pos)
    return values, update_ops


def _at_thresholds(key, default_name):
    def metric(labels, predictions, thresholds, weights=None, metrics_collections=None, updates_collections=None,
               name=None):
        with _vs().variable_scope(name, default_name, (predictions, labels, weights)):
            values, update_ops = _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights=weights,
                                                                 includes=(key,))
            value = _read(values[key], metrics_collections)
            _updates(updates_collections, update_ops[key])
            return value, update_ops[key]
    metric.__name__ = default_name + "_at_thresholds"
    return metric


true_positives_at_thresholds = _at_thresholds("tp", "true_positives")
false_positives_at_thresholds = _at_thresholds("fp", "false_positives")
true_negatives_at_thresholds = _at_thresholds("tn", "true_negatives")
false_negatives_at_thresholds = _at_thresholds("fn", "false_negatives")


def _ratio_at_thresholds(default_name, other, labels, predictions, thresholds, weights, metrics_collections,
                         updates_collections, name):
    """tp / (epsilon + tp + other) at each threshold: precision (other "fp") and recall ("fn"); the
    ops are named "<precision|recall>_value" and "..._update_op" as TensorFlow names them."""
    with _vs().variable_scope(name, default_name + "_at_thresholds", (predictions, labels, weights)):
        values, update_ops = _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights,
                                                             includes=("tp", other))
        epsilon = 1e-7

        def compute_ratio(tp, o, name):
            return math_ops.divide(tp, epsilon + tp + o, name=default_name + "_" + name)

        value = _aggregate(metrics_collections, lambda _, v: compute_ratio(v["tp"], v[other], "value"), values)
        update_op = compute_ratio(update_ops["tp"], update_ops[other], "update_op")
        _updates(updates_collections, update_op)
        return value, update_op


def precision_at_thresholds(labels, predictions, thresholds, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    return _ratio_at_thresholds("precision", "fp", labels, predictions, thresholds, weights, metrics_collections,
                                updates_collections, name)


def recall_at_thresholds(labels, predictions, thresholds, weights=None, metrics_collections=None,
                         updates_collections=None, name=None):
    return _ratio_at_thresholds("recall", "fn", labels, predictions, thresholds, weights, metrics_collections,
                                updates_collections, name)


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None, updates_collections=None,
        curve="ROC", name=None, summation_method="trapezoidal", thresholds=None):
    """The area under the ROC or PR curve, from a confusion matrix at num_thresholds thresholds."""
    with _vs().variable_scope(name, "auc", (labels, predictions, weights)):
        if curve != "ROC" and curve != "PR":
            raise ValueError("Curve must be either ROC or PR. Curve %s is unknown." % curve)
        kepsilon = 1e-7
        if thresholds is not None:
            thresholds = sorted(thresholds)
            num_thresholds = len(thresholds) + 2
        else:
            thresholds = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        thresholds = [0.0 - kepsilon] + thresholds + [1.0 + kepsilon]
        values, update_ops = _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights)
        epsilon = 1.0e-6
        n = num_thresholds

        def head(t):
            return t[:n - 1]

        def tail(t):
            return t[1:]

        def interpolate_pr_auc(tp, fp, fn):
            dtp = head(tp) - tail(tp)
            p = tp + fp
            prec_slope = nn_ops.div_no_nan(dtp, math_ops.maximum(head(p) - tail(p), 0), name="prec_slope")
            intercept = tail(tp) - math_ops.multiply(prec_slope, tail(p))
            safe_p_ratio = array_ops.where(
                math_ops.logical_and(head(p) > 0, tail(p) > 0),
                nn_ops.div_no_nan(head(p), math_ops.maximum(tail(p), 0), name="recall_relative_ratio"),
                array_ops.ones_like(tail(p)))
            return math_ops.reduce_sum(
                nn_ops.div_no_nan(prec_slope * (dtp + intercept * math_ops.log(safe_p_ratio)),
                                  math_ops.maximum(tail(tp) + tail(fn), 0), name="pr_auc_increment"),
                name="interpolate_pr_auc")

        def compute_auc(tp, fn, tn, fp, name):
            if curve == "PR" and summation_method == "careful_interpolation":
                return interpolate_pr_auc(tp, fp, fn)
            rec = math_ops.divide(tp + epsilon, tp + fn + epsilon)
            if curve == "ROC":
                x = math_ops.divide(fp, fp + tn + epsilon)
                y = rec
            else:
                x = rec
                y = math_ops.divide(tp + epsilon, tp + fp + epsilon)
            if summation_method in ("trapezoidal", "careful_interpolation"):
                return math_ops.reduce_sum(math_ops.multiply(head(x) - tail(x), (head(y) + tail(y)) / 2.), name=name)
            if summation_method == "minoring":
                return math_ops.reduce_sum(math_ops.multiply(head(x) - tail(x), math_ops.minimum(head(y), tail(y))),
                                           name=name)
            if summation_method == "majoring":
                return math_ops.reduce_sum(math_ops.multiply(head(x) - tail(x), math_ops.maximum(head(y), tail(y))),
                                           name=name)
            raise ValueError("Invalid summation_method: %s summation_method should be 'trapezoidal', "
                             "'careful_interpolation', 'minoring', or 'majoring'." % summation_method)

        auc_value = _aggregate(metrics_collections,
                               lambda _, v: compute_auc(v["tp"], v["fn"], v["tn"], v["fp"], "value"), values)
        update_op = compute_auc(update_ops["tp"], update_ops["fn"], update_ops["tn"], update_ops["fp"], "update_op")
        _updates(updates_collections, update_op)
        return auc_value, update_op


# ---- per class -------------------------------------------------------------------------------


def mean_per_class_accuracy(labels, predictions, num_classes, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """The mean over classes of each class's accuracy."""
    with _vs().variable_scope(name, "mean_accuracy", (predictions, labels, weights)):
        labels = math_ops.cast(labels, dtypes.int64)
        predictions = ops.convert_to_tensor(predictions)
        if labels.shape.ndims > 1:
            labels = array_ops.reshape(labels, [-1])
        if predictions.shape.ndims > 1:
            predictions = array_ops.reshape(predictions, [-1])
        predictions.shape.assert_is_compatible_with(labels.shape)
        total = metric_variable([num_classes], dtypes.float32, name="total")
        count = metric_variable([num_classes], dtypes.float32, name="count")
        ones = array_ops.ones(array_ops.stack([array_ops.size(labels)]), dtypes.float32)
        if labels.dtype.base_dtype != predictions.dtype.base_dtype:
            predictions = math_ops.cast(predictions, labels.dtype.base_dtype)
        is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
        if weights is not None:
            weights = ops.convert_to_tensor(weights)
            if weights.shape.ndims > 1:
                weights = array_ops.reshape(weights, [-1])
            weights = math_ops.cast(weights, dtypes.float32)
            is_correct *= weights
            ones *= weights
        v = _variables()
        update_total_op = v.scatter_add(total, labels, ones)
        update_count_op = v.scatter_add(count, labels, is_correct)

        def compute_mean_accuracy(_, count, total):
            per_class_accuracy = nn_ops.div_no_nan(count, math_ops.maximum(total, 0))
            return math_ops.reduce_mean(per_class_accuracy, name="mean_accuracy")

        mean_accuracy_v = _aggregate(metrics_collections, compute_mean_accuracy, count, total)
        update_op = nn_ops.div_no_nan(update_count_op, math_ops.maximum(update_total_op, 0), name="update_op")
        _updates(updates_collections, update_op)
        return mean_accuracy_v, update_op


def _confusion_matrix(labels, predictions, num_classes, weights=None, dtype=dtypes.float64):
    """[num_classes, num_classes] counts of (label, prediction) pairs (weighted)."""
    labels = math_ops.cast(labels, dtypes.int64)
    predictions = math_ops.cast(predictions, dtypes.int64)
    check = _check()
    n = math_ops.cast(num_classes, dtypes.int64)
    labels = check.with_dependencies([check.assert_non_negative(labels, message="`labels` contains negative values"),
                                      check.assert_less(labels, n, message="`labels` out of bound")], labels)
    predictions = check.with_dependencies(
        [check.assert_non_negative(predictions, message="`predictions` contains negative values"),
         check.assert_less(predictions, n, message="`predictions` out of bound")], predictions)
    values = array_ops.ones_like(predictions, dtype) if weights is None else math_ops.cast(weights, dtype)
    flat = labels * n + predictions
    cm = math_ops.unsorted_segment_sum(values, flat, math_ops.cast(n * n, dtypes.int32))
    return array_ops.reshape(cm, array_ops.stack([num_classes, num_classes]))


def mean_iou(labels, predictions, num_classes, weights=None, metrics_collections=None, updates_collections=None,
             name=None):
    """The mean over classes of intersection over union, from a running confusion matrix."""
    with _vs().variable_scope(name, "mean_iou", (predictions, labels, weights)):
        predictions = ops.convert_to_tensor(predictions)
        labels = ops.convert_to_tensor(labels)
        predictions.shape.assert_is_compatible_with(labels.shape)
        total_cm = metric_variable([num_classes, num_classes], dtypes.float64, name="total_confusion_matrix")
        if predictions.shape.ndims > 1:
            predictions = array_ops.reshape(predictions, [-1])
        if labels.shape.ndims > 1:
            labels = array_ops.reshape(labels, [-1])
        if weights is not None:
            weights = ops.convert_to_tensor(weights)
            if weights.shape.ndims > 1:
                weights = array_ops.reshape(weights, [-1])
        current_cm = _confusion_matrix(labels, predictions, num_classes, weights=weights, dtype=dtypes.float64)
        update_op = _assign_add(total_cm, current_cm)

        def compute_mean_iou(_, total_cm):
            sum_over_row = math_ops.cast(math_ops.reduce_sum(total_cm, 0), dtypes.float32)
            sum_over_col = math_ops.cast(math_ops.reduce_sum(total_cm, 1), dtypes.float32)
            eye = array_ops.constant(__import__("numpy").eye(num_classes), dtypes.float64)
            cm_diag = math_ops.cast(math_ops.reduce_sum(total_cm * eye, 1), dtypes.float32)
            denominator = sum_over_row + sum_over_col - cm_diag
            num_valid_entries = math_ops.reduce_sum(math_ops.cast(math_ops.not_equal(denominator, 0),
                                                                  dtype=dtypes.float32))
            denominator = array_ops.where(math_ops.greater(denominator, 0), denominator,
                                          array_ops.ones_like(denominator))
            iou = math_ops.divide(cm_diag, denominator)
            return array_ops.where(math_ops.greater(num_valid_entries, 0),
                                   math_ops.reduce_sum(iou, name="mean_iou") / num_valid_entries, 0)

        mean_iou_v = _aggregate(metrics_collections, compute_mean_iou, total_cm)
        _updates(updates_collections, update_op)
        return mean_iou_v, update_op
