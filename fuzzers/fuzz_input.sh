# Sourced by the fuzz targets' shell tests: writes a differential fuzz input
# (isa/fuzz_input.h) from a variant's spelling and operands, with no binary
# of ours: the variant's stable id, FNV-1a 64 of its spelling, then the
# operands, each a little-endian 64-bit word.
#
#   write_fuzz_input FILE SPELLING OPERAND...   e.g. fns.b32 0 0 0x80000000

fnv1a64() {  # bash's 64-bit arithmetic wraps as uint64 does
  local s=$1 h=$((0xcbf29ce484222325)) i c
  for ((i = 0; i < ${#s}; i++)); do
    printf -v c '%d' "'${s:i:1}"
    h=$(((h ^ c) * 0x100000001b3))
  done
  echo "$h"
}

le64() {
  local v=$1 i
  for ((i = 0; i < 8; i++)); do
    printf "\\x$(printf '%02x' $(((v >> (8 * i)) & 0xff)))"
  done
}

write_fuzz_input() {
  local file=$1 spelling=$2 v
  shift 2
  { le64 "$(fnv1a64 "$spelling")"; for v in "$@"; do le64 "$v"; done; } >"$file"
}
