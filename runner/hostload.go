package runner

import (
	"cmp"
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/stat's times: 100 on every
// Linux ABI Go runs on (the kernel exports it as such whatever its HZ).
const clockTicks = 100

// cpuSample is what the host's CPUs and this process's family had done at
// one moment: the host's busy time (everything but idle and iowait, steal
// included: a hypervisor running another guest is load too), and the CPU
// time of this process and of its children that have been waited for.
type cpuSample struct {
	at         time.Time
	hostBusy   time.Duration
	self, kids time.Duration
}

// sampleCPU reads the host's and this process's CPU times; ok false where
// /proc/stat or getrusage cannot say (not Linux).
func sampleCPU() (cpuSample, bool) {
	s := cpuSample{at: time.Now()}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s, false
	}
	busy, ok := hostBusy(string(b))
	if !ok {
		return s, false
	}
	s.hostBusy = busy
	var self, kids syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids) != nil {
		return s, false
	}
	s.self = rusageCPU(self)
	s.kids = rusageCPU(kids)
	return s, true
}

// hostBusy is the busy time of all CPUs from /proc/stat's "cpu" line:
// user, nice, system, irq, softirq and steal (guest time is inside user).
func hostBusy(stat string) (time.Duration, bool) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, false
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system [idle iowait] irq softirq steal
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, false
		}
		ticks += v
	}
	return time.Duration(ticks) * (time.Second / clockTicks), true
}

func rusageCPU(r syscall.Rusage) time.Duration {
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// otherCPUs is how many CPUs, on average between two samples, processes
// other than this one and the children it reaped kept busy: the host's
// busy time less ours, over the wall time; unreaped is ours that rusage
// cannot see (a warm run's, reaped by its server). Runs of a session are one after
// another and their processes are waited for before the second sample, so
// ours is the run's (every rank, the launcher, what they reaped) plus
// gcjitter's own reading of the records.
func otherCPUs(a, b cpuSample, unreaped time.Duration) float64 {
	wall := b.at.Sub(a.at).Seconds()
	if wall <= 0 {
		return 0
	}
	ours := (b.self - a.self) + (b.kids - a.kids) + unreaped
	return max(0, (b.hostBusy-a.hostBusy-ours).Seconds()/wall)
}

// ProcCPU is a process's CPU use over a sampled interval.
type ProcCPU struct {
	PID  int
	Name string
	CPUs float64 // CPUs kept busy on average over the interval
}

// OtherLoad watches the host for d: how many CPUs processes other than
// this one kept busy on average, and the busiest of them (up to five, each
// at least 0.05 CPUs), for gcjitter system to say what loads the host. ok
// is false where /proc cannot say.
func OtherLoad(ctx context.Context, d time.Duration) (other float64, busiest []ProcCPU, ok bool) {
	a, ok := sampleCPU()
	if !ok {
		return 0, nil, false
	}
	before := procTicks()
	select {
	case <-ctx.Done():
		return 0, nil, false
	case <-time.After(d):
	}
	b, ok := sampleCPU()
	if !ok {
		return 0, nil, false
	}
	wall := b.at.Sub(a.at).Seconds()
	self := os.Getpid()
	for pid, t := range procTicks() {
		if t0, seen := before[pid]; seen && pid != self && t.ticks > t0.ticks {
			if cpus := float64(t.ticks-t0.ticks) / clockTicks / wall; cpus >= 0.05 {
				busiest = append(busiest, ProcCPU{PID: pid, Name: t.name, CPUs: cpus})
			}
		}
	}
	slices.SortFunc(busiest, func(x, y ProcCPU) int { return cmp.Compare(y.CPUs, x.CPUs) })
	return otherCPUs(a, b, 0), busiest[:min(len(busiest), 5)], true
}

type procTime struct {
	name  string
	ticks int64
}

// procTicks are every process's CPU ticks (user and system, all its
// threads) from /proc/PID/stat.
func procTicks() map[int]procTime {
	out := map[int]procTime{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // it exited
		}
		if name, ticks, ok := parseProcStat(string(b)); ok {
			out[pid] = procTime{name, ticks}
		}
	}
	return out
}

// procStat is /proc/PID/stat's fields from the third (state) on; nil
// when it cannot be read (the process is gone).
func procStat(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	return statFields(string(b))
}

// statFields are a /proc/PID/stat line's fields from the third (state)
// on: after the command's name, which ends at the last ')' (a name may
// hold spaces and either parenthesis); nil without one.
func statFields(line string) []string {
	end := strings.LastIndexByte(line, ')')
	if end < 0 {
		return nil
	}
	return strings.Fields(line[end+1:])
}

// parseProcStat reads a /proc/PID/stat line: the command's name (between
// the first '(' and the last ')': a name may hold either) and utime +
// stime, the 14th and 15th fields.
func parseProcStat(line string) (name string, ticks int64, ok bool) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return "", 0, false
	}
	f := statFields(line)
	if len(f) < 13 {
		return "", 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return "", 0, false
	}
	return line[open+1 : end], utime + stime, true
}
