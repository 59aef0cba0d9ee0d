"""tf.train names for state: optimizers, Saver, global step (filled in)."""
__all__ = []
