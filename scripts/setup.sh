#!/usr/bin/env bash
# Finds a Python interpreter that imports torch and prints its path on stdout.
# Where none is found and apt-get can be used, installs Debian's PyTorch;
# elsewhere it says exactly what to install. Everything else goes to stderr.
#
# Order: $GCJITTER_PYTHON, python3 on PATH, /usr/bin/python3.
set -euo pipefail

say() { echo "setup: $*" >&2; }

has_torch() { "$1" -c 'import torch' >/dev/null 2>&1; }

find_python() {
  local c
  for c in "${GCJITTER_PYTHON:-}" python3 /usr/bin/python3; do
    [ -n "$c" ] || continue
    c=$(command -v "$c" 2>/dev/null) || continue
    if has_torch "$c"; then echo "$c"; return 0; fi
  done
  return 1
}

can_apt() {
  command -v apt-get >/dev/null 2>&1 || return 1
  [ "$(id -u)" = 0 ] && return 0
  command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null
}

apt_install() {
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  say "installing $* with apt-get (no recommends)"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

# Debian's torch takes whichever BLAS the system provides; the reference BLAS
# is about 15x slower than OpenBLAS, which would swamp every measurement.
ensure_openblas() {
  command -v dpkg-query >/dev/null 2>&1 || return 0
  dpkg-query -W -f='${Status}' python3-torch 2>/dev/null | grep -q "ok installed" || return 0
  dpkg-query -W -f='${Status}' libopenblas0-pthread 2>/dev/null | grep -q "ok installed" && return 0
  if can_apt; then
    apt_install libopenblas0-pthread
  else
    say "warning: Debian's torch is using the reference BLAS (about 15x slower); install libopenblas0-pthread"
  fi
}

if py=$(find_python); then
  ensure_openblas
  echo "$py"
  exit 0
fi

if can_apt; then
  apt_install python3-torch python3-torchvision libopenblas0-pthread
  if py=$(find_python); then echo "$py"; exit 0; fi
fi

cat >&2 <<'MSG'
setup: no Python interpreter with torch was found (tried $GCJITTER_PYTHON, python3, /usr/bin/python3).
Install one of:
  Debian/Ubuntu:  apt-get install --no-install-recommends python3-torch python3-torchvision libopenblas0-pthread
  elsewhere:      python3 -m pip install torch torchvision   (or your platform's torch / torch_npu build)
then run again, or point GCJITTER_PYTHON at that interpreter.
MSG
exit 1
