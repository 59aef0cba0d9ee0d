"""tf.nn (TensorFlow 1.x's names and signatures)."""
from dflow.ops.nn_ops import (avg_pool, avg_pool2d, avg_pool_v2, batch_normalization, bias_add, conv2d,  # noqa: F401
                              conv2d_backprop_filter, conv2d_backprop_input, conv2d_transpose, crelu, dropout, elu,
                              embedding_lookup, fused_batch_norm, l2_loss, l2_normalize, leaky_relu, log_poisson_loss,
                              log_softmax, max_pool, max_pool2d, max_pool_v2, moments, normalize_moments, relu, relu6,
                              relu_layer, selu, sigmoid, sigmoid_cross_entropy_with_logits, silu, softmax,
                              softmax_cross_entropy_with_logits, softplus, softsign,
                              sparse_softmax_cross_entropy_with_logits, sufficient_statistics, swish, tanh,
                              weighted_cross_entropy_with_logits, weighted_moments, xw_plus_b, zero_fraction)
from dflow.ops.nn_ops import (avg_pool1d, compute_average_loss, conv1d, convolution, depth_to_space,  # noqa: F401
                              max_pool1d, scale_regularization_loss, softmax_cross_entropy_with_logits_v2,
                              space_to_depth)
from dflow.ops.nn_ops import (depthwise_conv2d, depthwise_conv2d_native,  # noqa: F401
                              depthwise_conv2d_native_backprop_filter, depthwise_conv2d_native_backprop_input)
from dflow.nn import rnn_cell  # noqa: F401,E402
from dflow.ops.rnn import bidirectional_dynamic_rnn, dynamic_rnn, static_rnn  # noqa: F401,E402

__all__ = [n for n in dir() if not n.startswith("_")]
