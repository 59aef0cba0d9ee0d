"""tf.train names for clusters: Server, ClusterSpec, MonitoredTrainingSession, hooks (filled in)."""
__all__ = []
