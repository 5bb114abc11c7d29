// The malloc family, interposed: glibc's large blocks as own mappings (memhooks.h), and free()
// kept from giving back a mapping a registration protects.
//
// Why: CUDA fails a copy that starts inside a host registration and ends past it, so the pin
// cache registers only whole mappings that one allocation owns. glibc serves a large malloc
// (from its mmap threshold: 128 KiB at start, rising to the size of freed blocks, at most
// 32 MiB) from a mapping of its own and gives it back with its internal munmap at free(),
// which the munmap hook never sees. So this library defines malloc, calloc, realloc,
// reallocarray, free, memalign, posix_memalign, aligned_alloc, valloc and pvalloc (earlier in
// the symbol search order than libc, as the memory hooks are), forwarding to glibc's own
// entry points (__libc_malloc, ...): a block glibc mapped on its own (its chunk header says
// IS_MMAPPED; the mapping's bounds follow from the header) enters the table; free() and
// realloc() of it leave it, and when a registration protects it, free() defers the real free
// until the cache unregistered (memhooks::DeferFree) so no allocation can land there before.
// A block on glibc's shared heap is never registered (a neighbour's copy could cross its end).
// The ibverbs cache keeps its memory regions over the same own mappings (its regions pin pages,
// not addresses: nothing is protected for it, and free() of a block it holds logs the mapping as
// invalidated; so does each new one, so no region over a freed block is handed out again).
//
// Cost: every malloc-family call pays two relaxed loads of flags written once (no shared
// counter: the probe's counts are kept only while it runs); while tracking (either cache on at
// load), also a read of the chunk header glibc just wrote or is about to read; large blocks take
// the out-of-line path. Measured (alloc_hooks_bench, one thread, malloc(64)+free): 165-173
// instructions a pair against glibc's 143, about 10-11 ns against 9. Only when the
// malloc in use is glibc's: another allocator earlier in the search order (LD_PRELOAD jemalloc,
// a sanitizer) makes these definitions unused, which AllocHooksActive() finds out by calling the
// functions the dynamic linker gives every library. Not for sanitizer builds of this library.
#pragma once

namespace mpigpu::memreg {

// Whether large malloc'd blocks are known as own mappings (tracking on at load, the
// definitions reached through the dynamic linker, glibc's chunk layout recognized, a large block
// in a mapping of its own): probed once, thread-safe. Why not, when false.
bool AllocHooksActive();
const char* AllocHooksWhyNot();

}  // namespace mpigpu::memreg
