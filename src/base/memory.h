// Process-wide memory settings.
#pragma once

namespace dflow {

// Keeps big freed blocks for reuse instead of returning them to the OS at once. glibc serves
// blocks above its mmap threshold (at most 32 MiB) with fresh mappings, so a step that makes a
// 64 MiB tensor every time pays a page fault per 4 KiB page, every time: a third of a big
// transfer's time went there. With this, blocks up to 1 GiB come from the (one) heap and freed
// memory is kept up to 1 GiB. Idempotent.
//
// It runs when the library is loaded, before main: glibc fixes how many arenas it makes the first
// time a second thread allocates, so a process that started any thread first (gRPC starts several
// as soon as it is initialized) would keep per-thread arenas, whose heaps cannot hold a 64 MiB
// block. InitDflow() calls it again, which changes nothing.
void TuneMemoryAllocator();

}  // namespace dflow
