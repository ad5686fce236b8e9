# Sourced by the fuzz targets' shell tests: writes a differential fuzz input
# (isa/fuzz_input.h) from a variant's spelling and operands, with no binary
# of ours: the variant's stable id, FNV-1a 64 of its spelling, then the
# operands, each a little-endian 64-bit word; and a program fuzz input
# (below).
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

# Program inputs (program/program_encoding.h), record by record, e.g.
# and.b32 of two inputs, then xor.b32 of that and the first input, stored:
#
#   { program_inputs 0x35 0x1c              .b32 inputs, by their witnesses
#     program_steps 2                       the step records that follow
#     program_instruction and.b32 r1 r0     a source: rK, the K-th most
#     program_instruction xor.b32 r0 r2     recently set register, or an
#     program_outputs 0                     immediate; outputs: picks among
#   } >FILE                                 all registers, the latest first

u8() { printf "\\x$(printf '%02x' $(($1 & 0xff)))"; }

program_inputs() {
  le64 0x31474f5250445850  # PXDPROG1
  u8 $#
  local w
  for w in "$@"; do u8 1 && le64 "$w"; done
}

program_steps() { u8 "$1"; }

program_instruction() {
  local spelling=$1 o
  shift
  u8 0  # an instruction, unguarded, to a new register
  le64 "$(fnv1a64 "$spelling")"
  u8 $#
  for o in "$@"; do
    if [[ $o == r* ]]; then u8 $((0x80 | ${o#r})); else u8 0 && le64 "$o"; fi
  done
}

program_outputs() {
  u8 $(($# - 1))
  local pick
  for pick in "$@"; do u8 "$pick"; done
}
