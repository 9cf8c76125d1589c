#!/usr/bin/env bash
# stack-root.sh STACK PY DIR PKG...: scripts/stack.sh's way to a CPython no
# pyenv or distribution on this host has yet (3.14, 3.15): a minimal Debian
# unstable root made with debootstrap, holding python$PY and a venv (/venv)
# with PKG from PyPI, and beside it bin/python, a wrapper that runs that
# venv's python in the root as if it were on this host. The host's own
# Python is left as it is. Prints the wrapper's path on stdout; what it did,
# how long it took and the size go to stderr. Needs root (debootstrap, and
# the wrapper's mounts and chroot) and debootstrap.
#
# The mirror is this host's own Debian mirror (from its apt sources), or
# $GCJITTER_DEBIAN_MIRROR, or debootstrap's default. Wheels are kept in
# $PIP_CACHE_DIR/files (the other stacks' pip cache), which the wrapper
# makes visible inside the root, so a second make downloads no wheel; pip
# there checks certificates against this host's CA bundle, copied in.
set -euo pipefail
stack=$1 py=$2 root=$3
shift 3
say() { echo "stack.sh: $*" >&2; }

dir=$root/$stack
if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "import torch" >/dev/null 2>&1; then
  echo "$dir/bin/python"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  say "$stack runs CPython $py in a Debian unstable chroot, which needs root (debootstrap, mount, chroot); run as root, or install python$py and use a venv"
  exit 3
fi
for tool in debootstrap unshare mountpoint; do
  if ! command -v $tool >/dev/null 2>&1; then
    say "$stack needs $tool (apt-get install debootstrap util-linux)"
    exit 3
  fi
done

mirror=${GCJITTER_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
  # The first Debian archive this host's apt uses (deb822 or one-line form).
  mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
    awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }' || true)
fi
if [ -z "$mirror" ]; then
  mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:.*\/debian\/?$/) { print $i; exit } }' || true)
fi

start=$(date +%s)
mkdir -p "$root"
tmp=$dir.tmp
rm -rf "$tmp"
mkdir -p "$tmp/bin"
say "$stack: debootstrap of Debian unstable with python$py${mirror:+ from $mirror}"
# minbase: no init, no apt recommends; the -venv package brings ensurepip.
debootstrap --variant=minbase --include="python$py,python$py-venv" \
  unstable "$tmp/root" ${mirror:+"$mirror"} >"$tmp/debootstrap.log" 2>&1 || {
  say "debootstrap failed; its log: $tmp/debootstrap.log"
  tail -5 "$tmp/debootstrap.log" >&2
  exit 1
}
rm -f "$tmp/root/var/cache/apt/archives/"*.deb
# A CA bundle this host trusts (a proxy's own CA included) is the one pip
# needs there ($PIP_CERT and pip.conf name this path on Debian).
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  mkdir -p "$tmp/root/etc/ssl/certs"
  cp /etc/ssl/certs/ca-certificates.crt "$tmp/root/etc/ssl/certs/ca-certificates.crt"
fi
[ -f /etc/pip.conf ] && cp /etc/pip.conf "$tmp/root/etc/pip.conf"

cat >"$tmp/bin/python" <<'WRAPPER'
#!/bin/sh
# Made by gcjitter's scripts/stack.sh: runs ../root/venv/bin/python (a Debian
# unstable root) as if it were a python on this host. In a private mount
# namespace the root gets this host's /dev, /proc, /sys and /tmp, and the
# top-level directory of the working directory and of every absolute path
# among the arguments, at the same paths. Each step execs, so the pid that
# was started is python's: signals, the exit status, the process group and
# inherited descriptors (the worker's records on fd 3) pass as they are.
# Paths reached only through symlinks into other top-level directories are
# not seen. Needs root (mount, chroot).
self=$(cd "$(dirname "$0")" && pwd -P)/$(basename "$0")
root=$(cd "$(dirname "$0")/.." && pwd -P)/root
if [ "$(id -u)" != 0 ]; then
  echo "$self: this python runs in a chroot ($root), which needs root" >&2
  exit 126
fi
if [ "${GCJITTER_STACK_ROOT:-}" != "$root" ]; then
  GCJITTER_STACK_ROOT=$root exec unshare --mount --propagation private "$self" "$@"
fi
unset GCJITTER_STACK_ROOT
bind() { # $1: a host directory at the top level, bound at the same path
  case $1 in /|/usr|/etc|/bin|/sbin|/lib|/lib32|/lib64|/libx32|/var|/dev|/proc|/sys|/run|/boot) return 1 ;; esac
  [ -d "$1" ] || return 1
  mountpoint -q "$root$1" && return 0
  mkdir -p "$root$1" && mount --rbind "$1" "$root$1"
}
top() { t=${1#/}; echo "/${t%%/*}"; }
for d in /dev /proc /sys; do mount --rbind "$d" "$root$d"; done
bind /tmp
wd=$(pwd -P)
if [ "$wd" != / ] && ! bind "$(top "$wd")"; then
  echo "$self: the working directory $wd cannot be shown inside the stack's root (it is a system directory there); run from elsewhere" >&2
  exit 126
fi
for a in "$@"; do
  case $a in --*=/*) a=${a#*=} ;; esac
  case $a in /*) bind "$(top "$a")" || true ;; esac
done
exec unshare --root="$root" --wd="$wd" /venv/bin/python "$@"
WRAPPER
chmod +x "$tmp/bin/python"

chroot "$tmp/root" "/usr/bin/python$py" -m venv /venv
# The wheels are kept as files: pip's HTTP cache stays empty behind an index
# or proxy whose answers forbid caching (this host's, 2026-12-06), and pip
# download skips a file it already holds. Local --find-links directories of
# this host are passed as arguments, so that the wrapper shows them inside.
wheels=$PIP_CACHE_DIR/files
mkdir -p "$wheels"
links=(--find-links "$wheels")
for l in ${PIP_FIND_LINKS:-}; do [ -d "$l" ] && links+=(--find-links "$l"); done
pip=(env -u PIP_FIND_LINKS "$tmp/bin/python" -m pip)
"${pip[@]}" download -q -d "$wheels" "${links[@]}" pip "$@" >&2
"${pip[@]}" install -q --no-index "${links[@]}" --upgrade pip >&2
"${pip[@]}" install -q --no-index "${links[@]}" "$@" >&2
rm -rf "$dir"
mv "$tmp" "$dir"
took=$(( $(date +%s) - start ))
size=$(du -sh "$dir" | cut -f1)
say "$stack: $("$dir/bin/python" -c "import sys, importlib.metadata as m; print('python', sys.version.split()[0], 'torch', m.version('torch'))") in $dir ($size, ${took}s)"
echo "$dir/bin/python"
