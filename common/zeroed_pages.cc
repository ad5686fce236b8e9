#include "common/zeroed_pages.h"

#include <sys/mman.h>

#include <new>
#include <utility>

namespace ptxdiff {

ZeroedPages::ZeroedPages(size_t bytes) : data_(nullptr), bytes_(bytes) {
  if (bytes_ == 0) return;
  void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  // Advice only: without huge pages the table still works, one small page
  // fault at a time.
  madvise(p, bytes_, MADV_HUGEPAGE);
  data_ = p;
}

ZeroedPages::~ZeroedPages() {
  if (data_ != nullptr) munmap(data_, bytes_);
}

ZeroedPages::ZeroedPages(ZeroedPages&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

}  // namespace ptxdiff
