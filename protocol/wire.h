// The byte-level pieces of the worker protocol's payloads: little-endian
// fields, length-prefixed strings, and a reader that fails (never crashes)
// past the end. For the codecs of protocol.h and of what rides in its
// opaque fields (program/program_wire.h); not an interface of its own.

#ifndef PTXDIFF_PROTOCOL_WIRE_H_
#define PTXDIFF_PROTOCOL_WIRE_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "protocol/protocol.h"

namespace ptxdiff {

// The wire is little-endian, like every host ptxdiff builds on; the
// static_assert keeps the memcpy-based fast paths honest.
static_assert(std::endian::native == std::endian::little);

inline void PutLe(std::string& out, uint64_t value, int bytes) {
  char buf[8];
  std::memcpy(buf, &value, 8);
  out.append(buf, bytes);
}

template <typename T>
T LoadLe(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// A string with its u16 length. One longer than the field can say (a note
// with the SASS listing of a big kernel) is cut, on a UTF-8 character's
// boundary, and says so: written whole, its length would wrap and every
// record after it would be read from the wrong bytes.
inline void PutString(std::string& out, absl::string_view s) {
  if (s.size() > kMaxWireString) {
    size_t keep = kMaxWireString - kCutMark.size();
    while (keep > 0 && (static_cast<uint8_t>(s[keep]) & 0xc0) == 0x80) --keep;
    PutLe(out, keep + kCutMark.size(), 2);
    out.append(s.data(), keep);
    out.append(kCutMark.data(), kCutMark.size());
    return;
  }
  PutLe(out, s.size(), 2);
  out.append(s.data(), s.size());
}

// Bytes with their u32 length, whole: a program case or a check, which may
// be longer than a u16 string (a program of 10,000 steps). The frame's
// size limit bounds them.
inline void PutBlob(std::string& out, absl::string_view s) {
  PutLe(out, s.size(), 4);
  out.append(s.data(), s.size());
}

// Reads little-endian fields from a payload, failing (not crashing) past
// its end.
class Reader {
 public:
  explicit Reader(absl::string_view data) : data_(data) {}

  absl::StatusOr<uint64_t> Le(int bytes, absl::string_view what) {
    if (data_.size() - pos_ < static_cast<size_t>(bytes)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "truncated: ", what, " at byte ", pos_, " of ", data_.size()));
    }
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) {
      v |= uint64_t{static_cast<uint8_t>(data_[pos_ + i])} << (8 * i);
    }
    pos_ += bytes;
    return v;
  }

  // A PutString string.
  absl::StatusOr<std::string> String(absl::string_view what) {
    return Sized(2, what);
  }
  // A PutBlob blob.
  absl::StatusOr<std::string> Blob(absl::string_view what) {
    return Sized(4, what);
  }

  // Fails unless `count` records of `size` bytes remain.
  absl::Status ExpectRecords(uint64_t count, size_t size,
                             absl::string_view what) const {
    if ((data_.size() - pos_) / size < count) {
      return absl::InvalidArgumentError(absl::StrCat(
          "truncated: ", count, " ", what, " of ", size, " bytes need ",
          count * size, " bytes, ", data_.size() - pos_, " left"));
    }
    return absl::OkStatus();
  }

  // The next `n` bytes, which the caller has checked are there
  // (ExpectRecords).
  const char* Take(size_t n) {
    const char* p = data_.data() + pos_;
    pos_ += n;
    return p;
  }

  absl::Status ExpectEnd() const {
    if (pos_ == data_.size()) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat(data_.size() - pos_, " unexpected bytes at the end"));
  }

 private:
  absl::StatusOr<std::string> Sized(int length_bytes, absl::string_view what) {
    auto size = Le(length_bytes, what);
    if (!size.ok()) return size.status();
    if (data_.size() - pos_ < *size) {
      return absl::InvalidArgumentError(
          absl::StrCat("truncated: ", what, " of ", *size, " bytes"));
    }
    std::string s(data_.substr(pos_, *size));
    pos_ += *size;
    return s;
  }

  absl::string_view data_;
  size_t pos_ = 0;
};

// Reads `expr` (a StatusOr) into `lhs`, returning its error.
#define PTXDIFF_READ(lhs, expr)                 \
  auto lhs##_or = (expr);                       \
  if (!lhs##_or.ok()) return lhs##_or.status(); \
  auto lhs = *std::move(lhs##_or)

}  // namespace ptxdiff

#endif  // PTXDIFF_PROTOCOL_WIRE_H_
