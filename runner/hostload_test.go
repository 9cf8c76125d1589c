package runner

import (
	"context"
	"math"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// TestHostBusy: /proc/stat's first line in USER_HZ ticks, idle and iowait
// left out, steal counted; anything else is "cannot say".
func TestHostBusy(t *testing.T) {
	stat := "cpu  100 20 30 5000 40 5 6 7 0 0\ncpu0 50 10 15 2500 20 2 3 3 0 0\n"
	got, ok := hostBusy(stat)
	if want := time.Duration(100+20+30+5+6+7) * 10 * time.Millisecond; !ok || got != want {
		t.Errorf("hostBusy = %v, %v; want %v", got, ok, want)
	}
	for _, bad := range []string{"", "intr 1 2 3\n", "cpu 1 2 3\n", "cpu  1 2 x 4 5 6 7 8\n"} {
		if _, ok := hostBusy(bad); ok {
			t.Errorf("hostBusy(%q) ok", bad)
		}
	}
}

// TestOtherCPUs: the host's busy time less this process's and its reaped
// children's, over the wall time; never below zero (the tick counts are
// coarser than rusage).
func TestOtherCPUs(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := cpuSample{at: t0, hostBusy: 10 * time.Second, self: time.Second, kids: 2 * time.Second}
	// 2 s of wall: the host was busy 3.5 s, of which the run's worker 1.8 s
	// and gcjitter 0.2 s: other processes kept 0.75 CPUs busy.
	b := cpuSample{at: t0.Add(2 * time.Second), hostBusy: 13500 * time.Millisecond, self: 1200 * time.Millisecond, kids: 3800 * time.Millisecond}
	if got := otherCPUs(a, b, 0); math.Abs(got-0.75) > 1e-9 {
		t.Errorf("otherCPUs = %v, want 0.75", got)
	}
	b.hostBusy = 11 * time.Second // less than ours: tick rounding
	if got := otherCPUs(a, b, 0); got != 0 {
		t.Errorf("otherCPUs = %v, want 0", got)
	}
	// A warm run's 1 s, reaped by its server, is ours too.
	b.hostBusy = 13500 * time.Millisecond
	if got := otherCPUs(a, b, time.Second); math.Abs(got-0.25) > 1e-9 {
		t.Errorf("otherCPUs with 1 s unreaped = %v, want 0.25", got)
	}
	if got := otherCPUs(a, a, 0); got != 0 {
		t.Errorf("no wall time: %v, want 0", got)
	}
}

// TestParseProcStat: the name between the first '(' and the last ')'
// (names may hold both, and spaces), utime + stime after it.
func TestParseProcStat(t *testing.T) {
	line := "4242 (my (odd) name) R 1 4242 4242 0 -1 4194304 120 0 0 0 1500 250 0 0 20 0 3 0 100 1000 10 18446744073709551615\n"
	name, ticks, ok := parseProcStat(line)
	if !ok || name != "my (odd) name" || ticks != 1750 {
		t.Errorf("parseProcStat = %q, %d, %v; want \"my (odd) name\", 1750, true", name, ticks, ok)
	}
	for _, bad := range []string{"", "42 noparen R 1", "42 (x) R 1 2 3"} {
		if _, _, ok := parseProcStat(bad); ok {
			t.Errorf("parseProcStat(%q) ok", bad)
		}
	}
}

// TestOtherLoadSeesABurner: a CPU burner beside a half-second watch is
// other load, and the busiest process named is it. (That a quiet host
// reads near 0 cannot be promised under make test; measured by hand: 0 to
// 0.008 CPUs a run on a quiet host, docs/gate.md.)
func TestOtherLoadSeesABurner(t *testing.T) {
	if testing.Short() {
		t.Skip("burns a CPU for half a second")
	}
	burner := exec.Command("sh", "-c", "while :; do :; done")
	if err := burner.Start(); err != nil {
		t.Fatal(err)
	}
	defer burner.Wait()
	defer burner.Process.Kill()
	time.Sleep(50 * time.Millisecond)
	// The burner's own ticks around the call are the truth: on a host
	// already busy (make test beside a busy loop, another package's
	// browser) the burner gets a share of a CPU, not a whole one (0.15 in
	// one such run), and that share is what OtherLoad must report.
	pid := burner.Process.Pid
	t0, at0 := procTicks()[pid], time.Now()
	other, busiest, ok := OtherLoad(context.Background(), 500*time.Millisecond)
	if !ok {
		t.Skip("/proc cannot say here")
	}
	t1, at1 := procTicks()[pid], time.Now()
	share := float64(t1.ticks-t0.ticks) / clockTicks / at1.Sub(at0).Seconds()
	if share < 0.1 {
		t.Skipf("the burner got %.2f CPUs: the host is too busy to tell it apart", share)
	}
	// The two readings' windows differ by two scans of /proc, slow on a
	// loaded host, and by a 10 ms tick.
	tol := max(0.1, 0.3*share)
	if other < share-tol {
		t.Errorf("a CPU burner using %.2f CPUs read as %.2f CPUs of other load", share, other)
	}
	if !slices.ContainsFunc(busiest, func(p ProcCPU) bool {
		return p.PID == pid && p.Name == "sh" && math.Abs(p.CPUs-share) < tol
	}) {
		t.Errorf("the burner (sh, pid %d, %.2f CPUs by its own ticks) is not among the busiest at its share: %+v", pid, share, busiest)
	}
}
