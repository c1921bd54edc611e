#pragma once

namespace hookrelay {

// glibc returns freed memory at the top of a thread's heap to the kernel once more than
// M_TRIM_THRESHOLD (128 KiB by default) is free there. The store writer and the sender allocate
// and free batches of that size all the time, so every batch ended in madvise(MADV_DONTNEED): a
// TLB shootdown across the cores, then page faults to get the memory back. Measured on the
// deliver benchmark: about a third of the writer's time, and 1.6x the CPU per delivery. This
// keeps up to 16 MiB free per heap (and sends only allocations over 4 MiB, such as large bodies,
// straight to mmap), which stops the churn at the cost of a few MiB of resident memory.
// Call once, at the start of a long-running process (`hookrelay serve`, the benchmarks).
void TuneAllocator();

// Gives free heap memory back to the kernel (glibc's malloc_trim), in every arena. For after a
// rare, large, short-lived use of memory — a simulation of millions of requests — which would
// otherwise stay resident: freed, but kept by the allocator (measured: a server at 20 MiB stayed
// at 250-330 MiB after two such runs of GET /api/v1/simulate). Takes milliseconds; not for hot
// paths.
void ReleaseFreeMemory();

}  // namespace hookrelay
