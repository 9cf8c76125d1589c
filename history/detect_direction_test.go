package history

import (
	"testing"
	"time"
)

// TestDetectKnowsWhichWayIsWorse: a step down in a metric better higher
// (device-util) is a regression and a step up an improvement; the same
// steps in a metric better lower (p99) read the other way.
func TestDetectKnowsWhichWayIsWorse(t *testing.T) {
	series := func(metric string, before, after float64) *Series {
		s := &Series{Key: SeriesKey{HostClass: "c", Case: "k", Variant: "default", Metric: metric}}
		for i := range 30 {
			v := before
			if i >= 15 {
				v = after
			}
			v *= 1 + 0.002*float64(i%3-1) // a little noise, far under the step
			s.Nights = append(s.Nights, Night{NightInfo: &NightInfo{ID: "n", Started: time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC)}, Summary: NightSummary{Runs: 5, Median: v}})
		}
		return s
	}
	for _, tc := range []struct {
		metric        string
		before, after float64
		regression    bool
	}{
		{"device-util", 0.9, 0.6, true},
		{"device-util", 0.6, 0.9, false},
		{"p99", 0.6, 0.9, true},
		{"p99", 0.9, 0.6, false},
	} {
		fs := Detect([]*Series{series(tc.metric, tc.before, tc.after)}, DetectOptions{})
		if len(fs) != 1 {
			t.Fatalf("%s %v -> %v: %d findings, want 1", tc.metric, tc.before, tc.after, len(fs))
		}
		// history detect prints the verdict's word: a fall in utilisation
		// reads "regression".
		if want := map[bool]string{true: "regression", false: "improvement"}[tc.regression]; fs[0].Verdict() != want {
			t.Errorf("%s %v -> %v: history detect says %q, want %q", tc.metric, tc.before, tc.after, fs[0].Verdict(), want)
		}
		if fs[0].Regression != tc.regression || fs[0].Improvement == tc.regression {
			t.Errorf("%s %v -> %v: regression %v, improvement %v; want regression %v", tc.metric, tc.before, tc.after, fs[0].Regression, fs[0].Improvement, tc.regression)
		}
	}
}
