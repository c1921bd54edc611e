#include "common/allocator.h"

#include <malloc.h>

namespace hookrelay {

void TuneAllocator() {
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  mallopt(M_TRIM_THRESHOLD, 16 << 20);
}

void ReleaseFreeMemory() { malloc_trim(0); }

}  // namespace hookrelay
