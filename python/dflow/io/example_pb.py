"""tf.train.Example and the messages it is made of (Features, Feature, BytesList, FloatList,
Int64List, SequenceExample, FeatureList, FeatureLists): protocol buffer classes of dflow's
proto/example.proto and proto/feature.proto, whose field numbers are TensorFlow's, so
`SerializeToString()` gives TensorFlow's bytes and TensorFlow's bytes parse here."""
from dflow.framework.graph_pb import message_class

Example = message_class("Example")
SequenceExample = message_class("SequenceExample")
Features = message_class("Features")
Feature = message_class("Feature")
FeatureList = message_class("FeatureList")
FeatureLists = message_class("FeatureLists")
BytesList = message_class("BytesList")
FloatList = message_class("FloatList")
Int64List = message_class("Int64List")

__all__ = ["Example", "SequenceExample", "Features", "Feature", "FeatureList", "FeatureLists", "BytesList",
           "FloatList", "Int64List"]
