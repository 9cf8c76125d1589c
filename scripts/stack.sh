#!/usr/bin/env bash
# stack.sh STACK: makes (once) a venv with torch from PyPI for one of the
# stacks gcjitter is tested on, and prints its python's path on stdout;
# what it did, how long it took and the venv's size go to stderr.
#
#   torch2.15-py3.11   the newest torch on CPython 3.11 (pyenv)
#   torch2.5-py3.11    an older 2.x, the old side of upgrade gates
#   torch2.15-py3.12   the newest torch on CPython 3.12
#   torch2.15-py3.13   the newest torch on CPython 3.13 (gen-0 threshold 2000)
#   torch2.15-py3.14   the newest torch on CPython 3.14 (Debian unstable, in a chroot)
#   torch2.15-py3.15   the newest torch on CPython 3.15 (Debian unstable, in a chroot)
#   frameworks         torch2.15-py3.11 plus transformers (with accelerate) and lightning
#   hta                HolisticTraceAnalysis on CPython 3.11, no torch: the peer that
#                      reads the traces gcjitter imports (runner's TestHTAAgrees)
#
# Debian's torch 1.13 on /usr/bin/python3 (scripts/setup.sh) stays the
# oldest supported stack and the default (README, "Stacks").
#
# Venvs live in $GCJITTER_STACKS (default ~/.cache/gcjitter/stacks) and
# wheels in pip's cache ($PIP_CACHE_DIR, default ~/.cache/gcjitter/wheels),
# so a second make of a stack on the same machine downloads nothing. The
# PyPI torch for Linux x86_64 is a CUDA build of several GB; it runs on the
# CPU.
set -euo pipefail
stack=${1:?usage: stack.sh torch2.15-py3.11|torch2.5-py3.11|torch2.15-py3.12|torch2.15-py3.13|torch2.15-py3.14|torch2.15-py3.15|frameworks|hta}
root=${GCJITTER_STACKS:-$HOME/.cache/gcjitter/stacks}
export PIP_CACHE_DIR=${PIP_CACHE_DIR:-$HOME/.cache/gcjitter/wheels}
say() { echo "stack.sh: $*" >&2; }

case $stack in
  torch2.15-py3.11) py=3.11; pkgs=(torch==2.15.0) ;;
  torch2.5-py3.11) py=3.11; pkgs=(torch==2.5.1) ;;
  torch2.15-py3.12) py=3.12; pkgs=(torch==2.15.0) ;;
  torch2.15-py3.13) py=3.13; pkgs=(torch==2.15.0) ;;
  torch2.15-py3.14) py=3.14; pkgs=(torch==2.15.0); chroot=1 ;;
  torch2.15-py3.15) py=3.15; pkgs=(torch==2.15.0); chroot=1 ;;
  frameworks) py=3.11; pkgs=(torch==2.15.0 "transformers[torch]" lightning) ;;
  hta) py=3.11; pkgs=(holistictraceanalysis==0.5.0); probe=hta; pkgname=holistictraceanalysis ;;
  *) say "unknown stack $stack"; exit 2 ;;
esac
# numpy: torch's tensors from and to arrays, which the worker's emulated
# device and the frameworks use.
pkgs+=(numpy)

if [ -n "${chroot:-}" ]; then
  exec "$(dirname "$0")/stack-root.sh" "$stack" "$py" "$root" "${pkgs[@]}"
fi

venv=$root/$stack
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import ${probe:-torch}" >/dev/null 2>&1; then
  echo "$venv/bin/python"
  exit 0
fi

base=""
if command -v pyenv >/dev/null 2>&1; then
  v=$(pyenv versions --bare 2>/dev/null | grep -E "^${py//./\\.}\.[0-9]+$" | sort -V | tail -1 || true)
  [ -n "$v" ] && base=$(pyenv root)/versions/$v/bin/python3
fi
[ -n "$base" ] || base=$(command -v "python$py" 2>/dev/null || true)
if [ -z "$base" ]; then
  say "no CPython $py found (pyenv install $py, or your distribution's python$py)"
  exit 3
fi

start=$(date +%s)
mkdir -p "$root"
rm -rf "$venv.tmp"
"$base" -m venv "$venv.tmp"
"$venv.tmp/bin/python" -m pip install -q --upgrade pip >&2
"$venv.tmp/bin/python" -m pip install -q "${pkgs[@]}" >&2
# A venv's scripts name its directory: made in .tmp, it is moved whole
# only when complete, and its paths rewritten.
grep -rlI --null "$venv.tmp" "$venv.tmp/bin" | xargs -0 -r sed -i "s#$venv.tmp#$venv#g"
rm -rf "$venv"
mv "$venv.tmp" "$venv"
took=$(( $(date +%s) - start ))
size=$(du -sh "$venv" | cut -f1)
say "$stack: $("$venv/bin/python" -c "import sys, importlib.metadata as m; print('python', sys.version.split()[0], '${probe:-torch}', m.version('${pkgname:-torch}'))") in $venv ($size, ${took}s)"
echo "$venv/bin/python"
