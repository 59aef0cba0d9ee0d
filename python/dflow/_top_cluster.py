"""Top-level names of clusters and training loops: none (TensorFlow 1.x keeps them in tf.train:
dflow.training.api_cluster)."""
__all__ = []
