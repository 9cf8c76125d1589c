package runner

import (
	"context"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/results"
)

// The same fault compares equal whatever the numbers in it: a loaded host
// dies after 93 steps where another got to 129.
func TestFailureCauseIgnoresNumbers(t *testing.T) {
	a := &results.Run{Reason: "worker exited with status 7 after 129 steps", StderrTail: "Killed at 0x7f3a21\n"}
	b := &results.Run{Reason: "worker exited with status 7 after 93 steps", StderrTail: "Killed at 0x9\n"}
	c := &results.Run{Reason: "worker killed by SIGKILL after 93 steps"}
	if failureCause(a) != failureCause(b) {
		t.Errorf("%q and %q differ", failureCause(a), failureCause(b))
	}
	if failureCause(a) == failureCause(c) {
		t.Errorf("two different faults compare equal: %q", failureCause(c))
	}
}

// A run interrupted in its exit is kept only where the stop ended it:
// every stream whole, exit 0 or the stop's signal, stopped by the
// interrupt alone (TestRunInterruptedInItsExitKeepsTheRun runs one).
func TestMeasuredWhole(t *testing.T) {
	whole := func(mod func(*Result)) *Result {
		r := &Result{Stream: &bench.Stream{Meta: &bench.Meta{}, End: &bench.End{}}, Stopped: context.Canceled, ExitCode: -1, Signal: "SIGTERM"}
		if mod != nil {
			mod(r)
		}
		return r
	}
	for _, tc := range []struct {
		name string
		res  []*Result
		want bool
	}{
		{"stopped by SIGTERM", []*Result{whole(nil)}, true},
		{"stopped by SIGKILL after the grace", []*Result{whole(func(r *Result) { r.Signal = "SIGKILL" })}, true},
		{"exited 0 as the stop came", []*Result{whole(func(r *Result) { r.ExitCode, r.Signal = 0, "" })}, true},
		{"crashed in its exit", []*Result{whole(func(r *Result) { r.Signal = "SIGSEGV" })}, false},
		{"exit 1 of its own", []*Result{whole(func(r *Result) { r.ExitCode, r.Signal = 1, "" })}, false},
		{"its server lost", []*Result{whole(func(r *Result) { r.Stopped = &LostServerError{} })}, false},
		{"no end record", []*Result{whole(func(r *Result) { r.Stream.End = nil })}, false},
		{"an error record", []*Result{whole(func(r *Result) { r.Stream.Error = &bench.ErrorRecord{} })}, false},
		{"a rank stopped by another's failure", []*Result{whole(nil), whole(func(r *Result) { r.Stopped = &RankError{0, "x"} })}, false},
		{"a rank that never started", []*Result{whole(nil), nil}, false},
	} {
		if got := measuredWhole(tc.res); got != tc.want {
			t.Errorf("%s: kept %v, want %v", tc.name, got, tc.want)
		}
	}
}
