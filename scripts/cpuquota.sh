#!/bin/sh
# cpuquota.sh F command [args...]: runs the command as on a host F times as
# fast (0.5 <= F < number of CPUs), in a fresh cgroup v1 CPU group whose
# quota is F CPUs over a 2 ms period: the shortest period whose quota the
# kernel accepts at F = 0.5 (1 ms), so a step is slowed evenly rather than
# stopped for a long throttled stretch. Throttling has a cost of its own:
# at F = 0.5 a busy loop gets 0.43-0.44 CPU seconds a second on a 2-core
# VM (BENCHMARKS.md, "Host speed"). Needs a writable cgroup v1 cpu
# controller (root, /sys/fs/cgroup/cpu); exits 97 without one. Used by the
# half-speed gate test (docs/gate.md, "Host speed").
set -u
f=${1:?usage: cpuquota.sh FRACTION command [args...]}
shift
root=/sys/fs/cgroup/cpu
cg=$root/gcjitter-quota-$$
period=2000
quota=$(awk -v f="$f" -v p="$period" 'BEGIN { printf "%d", f * p }')
if [ "$quota" -lt 1000 ]; then
  echo "cpuquota.sh: $f CPUs is below the kernel's least quota (1 ms of a $period us period)" >&2
  exit 2
fi
if ! mkdir "$cg" 2>/dev/null || ! echo "$period" > "$cg/cpu.cfs_period_us" || ! echo "$quota" > "$cg/cpu.cfs_quota_us"; then
  rmdir "$cg" 2>/dev/null
  echo "cpuquota.sh: cannot make a cgroup v1 CPU group under $root (needs root and the cpu controller)" >&2
  exit 97
fi
sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$@"
rc=$?
rmdir "$cg" 2>/dev/null
exit $rc
