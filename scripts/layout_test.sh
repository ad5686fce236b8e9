#!/usr/bin/env bash
# The layout's rules (docs/architecture.md), checked on the source tree in a
# second: no file includes a header from a floor above its own, and no
# library's CMake DEPS name one there (tests may: they drive the floors
# above); every folder with sources has a floor and a README.md; no source
# file other than a test is over 800 lines.
#
#   layout_test.sh [SOURCE_DIR]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

max_lines=800
# One file by design: a tool author copies the kit's header whole
# (kit/README.md), so it is not split like the rest.
exempt_from_size=" kit/ptxdiff_worker.h "

failures=0
fail() {
  echo "layout: $*" >&2
  failures=$((failures + 1))
}

# The floors, lowest first, as docs/architecture.md lists them: "1. `isa` ...".
floors=$(sed -n '/^## Floors/,/^## /s/^[0-9][0-9]*\. `\([a-z_]*\)`.*/\1/p' \
  docs/architecture.md)
[[ -n $floors ]] || { echo "layout: no floors in docs/architecture.md" >&2; exit 1; }
declare -A floor_of
n=0
for f in $floors; do floor_of[$f]=$((n += 1)); done

# Sources outside the build trees, .git and third-party code.
mapfile -t sources < <(find . \( -name 'build*' -o -name .git -o -name out \
  -o -name third_party -o -name external \) -prune -o -type f \
  \( -name '*.cc' -o -name '*.h' \) -print | sed 's|^\./||' | sort)
[[ ${#sources[@]} -gt 0 ]] || { echo "layout: no sources found" >&2; exit 1; }

is_test() { [[ $1 == *_test.cc ]]; }

# Sizes.
while read -r lines path; do
  [[ $path == total ]] && continue
  is_test "$path" && continue
  [[ $exempt_from_size == *" $path "* ]] && continue
  ((lines <= max_lines)) ||
    fail "$path has $lines lines, over $max_lines: split it by concern"
done < <(printf '%s\0' "${sources[@]}" | xargs -0 wc -l)

# Every folder with sources has a floor.
declare -A has_sources
for path in "${sources[@]}"; do
  [[ $path == */* ]] && has_sources[${path%%/*}]=1
done
for folder in "${!has_sources[@]}"; do
  [[ -n ${floor_of[$folder]:-} ]] ||
    fail "$folder/ has no floor in docs/architecture.md"
done

# Every folder with sources says what it owns: a README.md beside them.
for folder in "${!has_sources[@]}"; do
  [[ -f $folder/README.md ]] ||
    fail "$folder/ has no README.md saying what it owns"
done

# Includes: a file's floor is its top folder's; an include names a folder
# first ("isa/variant.h"); other includes (absl, gtest, the kit's bare
# "ptxdiff_worker.h") are not the tree's.
while IFS=: read -r path line text; do
  is_test "$path" && continue
  header=${text#*\"}
  header=${header%%\"*}
  to=${header%%/*}
  from=${path%%/*}
  [[ $header == */* && -n ${has_sources[$to]:-} ]] || continue
  [[ -n ${floor_of[$from]:-} && -n ${floor_of[$to]:-} ]] || continue
  ((floor_of[$to] <= floor_of[$from])) ||
    fail "$path:$line includes $header: $to/ (floor ${floor_of[$to]}) is" \
      "above $from/ (floor ${floor_of[$from]})"
done < <(printf '%s\0' "${sources[@]}" |
  xargs -0 grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' || true)

# Libraries' DEPS: "folder name dep dep ..." for each ptxdiff_cc_library;
# a dependency is checked when it is one of the tree's libraries.
libraries=$(find . \( -name 'build*' -o -name .git \) -prune -o \
  -name CMakeLists.txt -print | sed 's|^\./||' | sort | while read -r cmake; do
  sed 's/#.*//' "$cmake" | tr '\n' ' ' | grep -o 'ptxdiff_cc_library([^)]*)' |
    awk -v folder="${cmake%%/*}" '{
      gsub(/[()]/, " "); out = folder; in_deps = 0
      for (i = 2; i <= NF; ++i) {
        if ($i == "NAME") { out = out " " $(i + 1); ++i }
        else if ($i == "SRCS" || $i == "HDRS") in_deps = 0
        else if ($i == "DEPS") in_deps = 1
        else if (in_deps) out = out " " $i
      }
      print out
    }' || true
done)
declare -A library_floor
while read -r folder name _; do
  library_floor[$name]=${floor_of[$folder]:-0}
done <<<"$libraries"
while read -r folder name dependencies; do
  for dep in $dependencies; do
    [[ -n ${library_floor[$dep]:-} ]] || continue
    ((library_floor[$dep] <= library_floor[$name])) ||
      fail "$folder/CMakeLists.txt: library $name depends on $dep, of a" \
        "floor above"
  done
done <<<"$libraries"

if ((failures > 0)); then
  echo "layout: $failures problem(s); the floors are in docs/architecture.md" >&2
  exit 1
fi
echo "layout: ${#sources[@]} sources, $n floors: no include or dependency runs up, no file too long"
