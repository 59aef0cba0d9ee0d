"""The graphs of the introduction, as TensorFlow 1.x code: building a graph computes nothing, a
session runs only what the fetched tensor needs, and placeholders are fed at each run.

    PYTHONPATH=build/python python3 examples/python/graph_basics.py

prints

    Tensor("Add:0", shape=(), dtype=int32)
    8
    7776
    15625
    ran: Add Add/x Add/y Mul Mul/x Mul/y Pow
    useless (Mul_1) ran: False
    7.5
    [3. 7.]
"""
import dflow as tf  # the one changed line: import tensorflow as tf

# A simple graph: printing `a` shows the symbolic tensor ("The answer is not 8!"); a session
# computes it.
with tf.Graph().as_default():
    a = tf.add(3, 5)
    print(a)
    with tf.Session() as sess:
        print(sess.run(a))

# Another graph: (x * y) ** (x + y) = 6 ** 5.
with tf.Graph().as_default():
    x = 2
    y = 3
    op1 = tf.add(x, y)
    op2 = tf.multiply(x, y)
    op3 = tf.pow(op2, op1)
    with tf.Session() as sess:
        op3 = sess.run(op3)
    print(op3)

# Another another graph: pow_op does not depend on `useless`, so the session does not run it.
# The trace of the run lists the nodes that ran.
with tf.Graph().as_default():
    x = 2
    y = 3
    add_op = tf.add(x, y)
    mul_op = tf.multiply(x, y)
    useless = tf.multiply(x, add_op)
    pow_op = tf.pow(add_op, mul_op)
    run_metadata = tf.RunMetadata()
    with tf.Session() as sess:
        z = sess.run(pow_op, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                     run_metadata=run_metadata)
    print(z)
    ran = sorted(n.node_name for d in run_metadata.step_stats.dev_stats for n in d.node_stats)
    print("ran:", " ".join(ran))
    print("useless (%s) ran: %s" % (useless.op.name, useless.op.name in ran))

# Placeholders: a promise to provide a value later, fed through feed_dict.
with tf.Graph().as_default():
    x = tf.placeholder(tf.float32)
    y = tf.placeholder(tf.float32)
    z = x + y
    with tf.Session() as sess:
        print(sess.run(z, feed_dict={x: 3, y: 4.5}))
        print(sess.run(z, feed_dict={x: [1, 3], y: [2, 4]}))
