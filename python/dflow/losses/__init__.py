"""tf.losses (tf.compat.v1.losses)."""
from dflow.losses.losses_impl import (Reduction, absolute_difference, compute_weighted_loss,  # noqa: F401
                                      cosine_distance, hinge_loss, huber_loss, log_loss, mean_pairwise_squared_error,
                                      mean_squared_error, sigmoid_cross_entropy, softmax_cross_entropy,
                                      sparse_softmax_cross_entropy)
from dflow.losses.util import (add_loss, get_losses, get_regularization_loss,  # noqa: F401
                               get_regularization_losses, get_total_loss)

__all__ = [n for n in dir() if not n.startswith("_") and n not in ("losses_impl", "util")]
