// The array op family, one registration function per file.
#pragma once

namespace dflow {

void RegisterConstOps();         // Const, Placeholder, PlaceholderWithDefault, Identity
void RegisterShapeOps();         // Shape, Rank, Size, Reshape, Fill (Cast is a math op: ops/math)
void RegisterConcatSplitOps();   // ConcatV2, ConcatOffset, Split, SplitV
void RegisterSlicePadOps();      // Slice, Pad, PadV2
void RegisterStridedSliceOps();  // StridedSlice, StridedSliceGrad
void RegisterPackOps();          // Pack, Unpack
void RegisterTransposeOps();     // Transpose, InvertPermutation, ExpandDims, Squeeze
void RegisterTileOps();          // Tile, BroadcastTo
void RegisterGatherOps();        // GatherV2, UnsortedSegmentSum, DynamicStitch
void RegisterPartitionOps();     // DynamicPartition
void RegisterValueOps();         // ZerosLike, OnesLike, StopGradient, Range, OneHot
void RegisterIdentityNOp();      // IdentityN
void RegisterShapeNOp();         // ShapeN
void RegisterUniqueOp();         // Unique

}  // namespace dflow
