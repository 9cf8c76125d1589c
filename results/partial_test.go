package results

import (
	"strings"
	"testing"
)

// TestPartial: a plan stopped at its last run has no run left to skip,
// yet it lacks what comes after it (the last speed point, the census), so
// it is partial; one whose runs all ended, some failed, is not.
func TestPartial(t *testing.T) {
	runs := func(statuses ...string) []*Run {
		var rs []*Run
		for _, s := range statuses {
			rs = append(rs, &Run{Status: s})
		}
		return rs
	}
	for _, tc := range []struct {
		name string
		m    Manifest
		want string
	}{
		{"every run ended", Manifest{Runs: runs(StatusOK, StatusFailed, StatusOK)}, ""},
		{"stopped at the last run", Manifest{Runs: runs(StatusOK, StatusOK, StatusFailed), StoppedBy: "run c/v/run-03 failed outside its worker (x)"},
			"partial: stopped because run c/v/run-03 failed outside its worker (x) after 3 of 3 runs"},
		{"stopped before the last", Manifest{Runs: runs(StatusOK, StatusFailed, StatusSkipped), StoppedBy: "y"}, "partial: stopped because y after 2 of 3 runs"},
		{"interrupted", Manifest{Runs: runs(StatusOK, StatusInterrupted, StatusSkipped), Interrupted: true}, "partial: interrupted after 1 of 3 runs"},
	} {
		if got := tc.m.Partial(); !strings.HasPrefix(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("%s: Partial() = %q, want it to start %q", tc.name, got, tc.want)
		}
	}
}
