package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/results"
	"github.com/google/go-cmp/cmp"
)

func TestProgressBlockHasALinePerVariant(t *testing.T) {
	runs := []*results.Run{
		{ID: "c/default/run-01", Case: "c", Variant: "default", Status: results.StatusOK, Seconds: 10},
		{ID: "c/manual:20/run-01", Case: "c", Variant: "manual:20", Status: results.StatusFailed},
		{ID: "c/default/run-02", Case: "c", Variant: "default", Status: results.StatusPending},
		{ID: "c/manual:20/run-02", Case: "c", Variant: "manual:20", Status: results.StatusPending},
		{ID: "other/x/run-01", Case: "other", Variant: "x", Status: results.StatusPending},
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	var out bytes.Buffer
	p := &Progress{w: &out, tty: true, now: func() time.Time { return now }}
	p.Begin(runs)
	p.RunStart(2, 5, runs[2])
	now = t0.Add(4 * time.Second)
	p.Step(runs[2], 50, 105)
	want := []string{
		"  default    run 2/2  step 50/105  ETA 6s",
		"  manual:20  run 2/2  waiting  (1 failed)  ETA 10s",
	}
	if diff := cmp.Diff(want, p.block(now)); diff != "" {
		t.Errorf("block (-want +got):\n%s", diff)
	}
	// Redrawing moves the cursor up over the old block and clears it.
	if !strings.Contains(out.String(), "\033[2F\033[J") {
		t.Errorf("no in-place redraw in %q", out.String())
	}
}

func TestProgressPlainLinesOffATerminal(t *testing.T) {
	var out bytes.Buffer
	p := New(&out)
	if p.tty {
		t.Fatal("a buffer is not a terminal")
	}
	r := &results.Run{ID: "c/default/run-01", Case: "c", Variant: "default", Status: results.StatusPending}
	p.Begin([]*results.Run{r})
	p.RunStart(0, 1, r)
	r.Status, r.Seconds = results.StatusOK, 1.5
	p.RunEnd(0, 1, r)
	if strings.Contains(out.String(), "\033") {
		t.Errorf("escape codes off a terminal: %q", out.String())
	}
	if !strings.Contains(out.String(), "gcjitter: run 1/1 c/default/run-01 (1.5s): ok") {
		t.Errorf("no end line: %q", out.String())
	}
}
