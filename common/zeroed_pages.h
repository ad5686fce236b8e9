// Big tables of zeroed memory for the campaign's lock-free counters and
// dedup: mapped from the kernel, so what is never touched costs nothing, and
// in huge pages where the kernel grants them (madvise), so that a 32 MB
// table written at random costs 16 page faults rather than 8,192 (a visible
// share of a campaign's start-up on a host with slow faults).

#ifndef PTXDIFF_COMMON_ZEROED_PAGES_H_
#define PTXDIFF_COMMON_ZEROED_PAGES_H_

#include <cstddef>
#include <type_traits>

namespace ptxdiff {

class ZeroedPages {
 public:
  // Throws std::bad_alloc if the kernel maps nothing.
  explicit ZeroedPages(size_t bytes);
  ~ZeroedPages();
  ZeroedPages(ZeroedPages&& other) noexcept;
  ZeroedPages& operator=(ZeroedPages&&) = delete;
  ZeroedPages(const ZeroedPages&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_;
  size_t bytes_;
};

// `n` zero-filled T: a type whose all-zero bytes are a valid value (plain
// integers, structs of them; atomics are used through std::atomic_ref).
template <typename T>
class ZeroedArray {
  static_assert(std::is_trivially_copyable_v<T> &&
                std::is_trivially_destructible_v<T>);

 public:
  explicit ZeroedArray(size_t n) : pages_(n * sizeof(T)), size_(n) {}
  T& operator[](size_t i) const { return static_cast<T*>(pages_.data())[i]; }
  size_t size() const { return size_; }

 private:
  ZeroedPages pages_;
  size_t size_;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_ZEROED_PAGES_H_
