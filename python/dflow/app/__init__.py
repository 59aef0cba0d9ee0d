"""tf.app: the entry point of TensorFlow 1.x programs, `tf.app.run(main=main, argv=...)`."""
import sys

try:  # TensorFlow's tf.app.flags are absl's flags; dflow offers them where absl is installed.
    from absl import flags
except ImportError:  # pragma: no cover - absl is optional
    flags = None


def run(main=None, argv=None):
    """Calls main(argv) (the __main__ module's main by default) and exits with what it returns.
    Flags defined with tf.app.flags are parsed from argv first; others are left to main."""
    main = main or sys.modules["__main__"].main
    args = list(sys.argv if argv is None else argv)
    if flags is not None and list(flags.FLAGS):
        args = flags.FLAGS(args, known_only=True)
    sys.exit(main(args))
