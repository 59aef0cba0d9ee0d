"""tf.summary (filled in below)."""
