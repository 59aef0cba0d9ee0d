// TensorChunkAssembler: tensors reassembled from RecvTensorChunk messages however the bytes of
// each message are cut into pieces, in whatever field order, and every malformed stream rejected
// with DataLoss naming the sender and the fault.
#include "rpc/tensor_chunks.h"

#include <numeric>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/worker.pb.h"
#include "tensor/tensor_proto.h"

namespace dflow::rpc {
namespace {

using ::testing::HasSubstr;

constexpr char kFrom[] = "/job:ps/replica:0/task:0 (127.0.0.1:1)";

Tensor Iota(int64_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.5f);
  return Tensor::FromValues<float>(v, TensorShape({n})).value();
}

// The messages of a stream, serialized by protobuf itself (an independent encoder): a first
// chunk that describes the tensor and carries up to `chunk` bytes, then data-only chunks.
std::vector<std::string> Encode(const Tensor& t, size_t chunk) {
  std::vector<std::string> out;
  const char* bytes = static_cast<const char*>(t.raw_data());
  const size_t total = t.TotalBytes();
  size_t off = 0;
  do {
    proto::RecvTensorChunk c;
    if (off == 0) {
      c.set_dtype(static_cast<proto::DataType>(t.dtype()));
      ShapeToProto(t.shape(), c.mutable_shape());
      c.set_total_bytes(static_cast<int64_t>(total));
    }
    size_t n = std::min(chunk, total - off);
    c.set_data(std::string(bytes + off, n));
    off += n;
    out.push_back(c.SerializeAsString());
  } while (off < total);
  return out;
}

Status AddWhole(TensorChunkAssembler* a, const std::string& msg) {
  absl::string_view piece(msg);
  return a->Add({&piece, 1});
}

void ExpectSameFloats(const Tensor& got, const Tensor& want) {
  ASSERT_TRUE(got.IsInitialized());
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < want.NumElements(); ++i) ASSERT_EQ(got.flat<float>()[i], want.flat<float>()[i]) << i;
}

TEST(TensorChunkAssemblerTest, ReassemblesChunksCutAtEveryByte) {
  const Tensor t = Iota(9);  // 36 bytes in chunks of 16, 16, 4
  const std::vector<std::string> msgs = Encode(t, 16);
  ASSERT_EQ(msgs.size(), 3u);
  // Each message cut into two pieces at every position (and an empty piece at the ends).
  for (size_t m = 0; m < msgs.size(); ++m) {
    for (size_t cut = 0; cut <= msgs[m].size(); ++cut) {
      TensorChunkAssembler a(kFrom);
      for (size_t k = 0; k < msgs.size(); ++k) {
        if (k != m) {
          ASSERT_TRUE(AddWhole(&a, msgs[k]).ok());
          continue;
        }
        absl::string_view whole(msgs[k]);
        absl::string_view pieces[2] = {whole.substr(0, cut), whole.substr(cut)};
        Status s = a.Add(pieces);
        ASSERT_TRUE(s.ok()) << "message " << m << " cut at " << cut << ": " << s;
      }
      RecvTensorResult r;
      ASSERT_TRUE(a.Finish(&r).ok());
      EXPECT_FALSE(r.is_dead);
      ExpectSameFloats(r.tensor, t);
    }
  }
}

TEST(TensorChunkAssemblerTest, ReassemblesOneBytePieces) {
  const Tensor t = Iota(1000);
  TensorChunkAssembler a(kFrom);
  for (const std::string& msg : Encode(t, 1024)) {
    std::vector<absl::string_view> pieces;
    for (size_t i = 0; i < msg.size(); ++i) pieces.push_back(absl::string_view(msg).substr(i, 1));
    ASSERT_TRUE(a.Add(pieces).ok());
  }
  RecvTensorResult r;
  ASSERT_TRUE(a.Finish(&r).ok());
  ExpectSameFloats(r.tensor, t);
}

TEST(TensorChunkAssemblerTest, DataBeforeTheDescriptionIsPlacedAfterIt) {
  const Tensor t = Iota(4);
  proto::RecvTensorChunk head;
  head.set_dtype(proto::DT_FLOAT);
  ShapeToProto(t.shape(), head.mutable_shape());
  head.set_total_bytes(16);
  proto::RecvTensorChunk data;
  data.set_data(std::string(static_cast<const char*>(t.raw_data()), 16));
  // Concatenated messages merge: here the data field comes first on the wire.
  TensorChunkAssembler a(kFrom);
  ASSERT_TRUE(AddWhole(&a, data.SerializeAsString() + head.SerializeAsString()).ok());
  RecvTensorResult r;
  ASSERT_TRUE(a.Finish(&r).ok());
  ExpectSameFloats(r.tensor, t);
}

TEST(TensorChunkAssemblerTest, DeadEmptyAndProtoTensors) {
  {
    proto::RecvTensorChunk c;
    c.set_is_dead(true);
    TensorChunkAssembler a(kFrom);
    ASSERT_TRUE(AddWhole(&a, c.SerializeAsString()).ok());
    RecvTensorResult r;
    ASSERT_TRUE(a.Finish(&r).ok());
    EXPECT_TRUE(r.is_dead);
  }
  {
    const Tensor empty = Tensor::Allocate(DT_FLOAT, TensorShape({0, 3})).value();
    TensorChunkAssembler a(kFrom);
    for (const std::string& m : Encode(empty, 16)) ASSERT_TRUE(AddWhole(&a, m).ok());
    RecvTensorResult r;
    ASSERT_TRUE(a.Finish(&r).ok());
    EXPECT_EQ(r.tensor.shape(), TensorShape({0, 3}));
  }
  {
    Tensor s = Tensor::FromValues<std::string>({"a", "bc"}, TensorShape({2})).value();
    proto::RecvTensorChunk c;
    TensorToProto(s, c.mutable_proto());
    TensorChunkAssembler a(kFrom);
    ASSERT_TRUE(AddWhole(&a, c.SerializeAsString()).ok());
    RecvTensorResult r;
    ASSERT_TRUE(a.Finish(&r).ok());
    ASSERT_EQ(r.tensor.dtype(), DT_STRING);
    EXPECT_EQ(r.tensor.flat<std::string>()[1], "bc");
  }
}

// Feeds `msgs` and returns the first error (from Add or Finish).
Status Feed(const std::vector<std::string>& msgs) {
  TensorChunkAssembler a(kFrom);
  for (const std::string& m : msgs) RETURN_IF_ERROR(AddWhole(&a, m));
  RecvTensorResult r;
  return a.Finish(&r);
}

void ExpectDataLoss(const Status& s, const std::string& what) {
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(kFrom)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(what)) << s;
}

TEST(TensorChunkAssemblerTest, MalformedStreamsAreDataLoss) {
  const std::vector<std::string> good = Encode(Iota(8), 16);
  ASSERT_EQ(good.size(), 2u);
  ASSERT_TRUE(Feed(good).ok());

  ExpectDataLoss(Feed({}), "no chunk arrived");
  ExpectDataLoss(Feed({good[0]}), "16 of 32 bytes arrived");
  ExpectDataLoss(Feed({good[0], good[1], good[1]}), "more bytes than the tensor holds");
  ExpectDataLoss(Feed({good[0], good[0]}), "describes the tensor again");
  // Cut off inside the last chunk's data, and inside a tag's varint.
  ExpectDataLoss(Feed({good[0], good[1].substr(0, good[1].size() - 1)}), "past the message's end");
  ExpectDataLoss(Feed({std::string("\x80", 1)}), "field tag is cut off");
  ExpectDataLoss(Feed({std::string("\x00\x01", 2)}), "field number is 0");
  ExpectDataLoss(Feed({std::string("\x0b", 1)}), "wire type 3");  // field 1, start group
  ExpectDataLoss(Feed({std::string("\x12\x05\x01", 3)}), "field 2 is cut off");
  // An absurd data length is refused before anything is read or allocated.
  ExpectDataLoss(Feed({good[0], std::string("\x2a\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 10)}),
                 "past the message's end");

  proto::RecvTensorChunk c;
  c.set_dtype(proto::DT_FLOAT);
  ShapeToProto(TensorShape({4}), c.mutable_shape());
  c.set_total_bytes(17);
  ExpectDataLoss(Feed({c.SerializeAsString()}), "announces 17 bytes for a float tensor of shape [4] (16 bytes)");
  c.set_total_bytes(16);
  c.set_dtype(static_cast<proto::DataType>(999));
  ExpectDataLoss(Feed({c.SerializeAsString()}), "unknown dtype 999");
  c.set_dtype(proto::DT_STRING);
  ExpectDataLoss(Feed({c.SerializeAsString()}), "cannot travel as bytes");
  proto::RecvTensorChunk dead;
  dead.set_is_dead(true);
  dead.set_data("x");
  ExpectDataLoss(Feed({dead.SerializeAsString()}), "more bytes than the tensor holds");
}

// A huge shape announced with a small total is refused before the tensor is allocated (it used to
// allocate the shape's bytes first: 4 TiB here fails the allocation, 3 GiB succeeded).
TEST(TensorChunkAssemblerTest, AWrongTotalIsRejectedBeforeTheTensorIsAllocated) {
  proto::RecvTensorChunk c;
  c.set_dtype(proto::DT_FLOAT);
  c.mutable_shape()->add_dim()->set_size(int64_t{1} << 40);
  c.set_total_bytes(16);
  ExpectDataLoss(Feed({c.SerializeAsString()}), "announces 16 bytes for a float tensor of shape [1099511627776]");
}

}  // namespace
}  // namespace dflow::rpc
