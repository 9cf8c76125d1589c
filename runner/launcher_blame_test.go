package runner

import (
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/bench"
)

// A rank killed after a step and a peer whose all-reduce then failed stop in
// one tick of the file clock: the silent one is blamed, whatever its number.
func TestFirstStoppedTie(t *testing.T) {
	tick := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	failedWith := func(err *bench.ErrorRecord) *Result {
		return &Result{Stream: &bench.Stream{Error: err}} // no end record: failed
	}
	peerFailed := &bench.ErrorRecord{Kind: "runtime", Message: "RuntimeError: Connection closed by peer"}
	for _, tc := range []struct {
		name string
		out  []*Result
		at   []time.Time
		want int
	}{
		{"tie: the silent rank", []*Result{failedWith(peerFailed), failedWith(nil)}, []time.Time{tick, tick}, 1},
		{"tie, both silent: the lower rank", []*Result{failedWith(nil), failedWith(nil)}, []time.Time{tick, tick}, 0},
		{"earlier wins over silence", []*Result{failedWith(peerFailed), failedWith(nil)}, []time.Time{tick, tick.Add(time.Millisecond)}, 0},
		{"no stream file", []*Result{failedWith(nil), failedWith(peerFailed)}, []time.Time{{}, tick}, 1},
	} {
		if got := firstStopped(tc.out, tc.at); got != tc.want {
			t.Errorf("%s: blamed rank %d, want %d", tc.name, got, tc.want)
		}
	}
}
