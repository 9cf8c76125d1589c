package runner

import (
	"math"
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
	if got := otherCPUs(a, b); math.Abs(got-0.75) > 1e-9 {
		t.Errorf("otherCPUs = %v, want 0.75", got)
	}
	b.hostBusy = 11 * time.Second // less than ours: tick rounding
	if got := otherCPUs(a, b); got != 0 {
		t.Errorf("otherCPUs = %v, want 0", got)
	}
	if got := otherCPUs(a, a); got != 0 {
		t.Errorf("no wall time: %v, want 0", got)
	}
}
