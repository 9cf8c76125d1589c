package stats

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestMain paces the collector for the known-truth studies, which allocate
// millions of short-lived slices (synthetic runs and their summaries): at
// the default GOGC of 100 its marking and assists took a fifth of their
// CPU (pprof of TestKnownTruth and the mixture studies). At 400 those three
// took 41 s instead of 58 s, holding 250 MB instead of 90 MB at their peak
// (BENCHMARKS.md, "make test's time"). A GOGC set by the caller wins.
func TestMain(m *testing.M) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(m.Run())
}
