#!/usr/bin/env bash
# Installs the Debian packages the build needs. Idempotent: does nothing when
# they are all present. Needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(
  clang clang-14 libclang-rt-14-dev cmake ninja-build
  libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev zlib1g-dev
  zip unzip  # .clusterfuzzlite/build.sh and its emulation (emulate.sh)
  chromium  # the report's browser tests (report/report_browser_test.cc)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "setup: all packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
