package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/gcjitter/gcjitter/results"
)

// newProgress shows runs as they go: a live line on a terminal, periodic
// plain lines elsewhere (CI logs).
func newProgress(w io.Writer) *progress {
	p := &progress{w: w, start: time.Now(), every: 30 * time.Second}
	if f, ok := w.(*os.File); ok && os.Getenv("TERM") != "dumb" {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty, p.every = true, 200*time.Millisecond
		}
	}
	return p
}

type progress struct {
	w     io.Writer
	tty   bool
	every time.Duration
	start time.Time

	mu        sync.Mutex
	last      time.Time
	runStart  time.Time
	doneRuns  int
	totalRuns int
	runSecs   float64 // seconds of the runs completed, for the ETA
}

func (p *progress) RunStart(n, total int, r *results.Run) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.runStart, p.totalRuns, p.last = time.Now(), total, time.Now()
	if !p.tty {
		fmt.Fprintf(p.w, "gcjitter: run %d/%d %s\n", n+1, total, r.ID)
	}
}

func (p *progress) Step(r *results.Run, done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.last) < p.every {
		return
	}
	p.last = now
	line := fmt.Sprintf("run %d/%d %s: step %d/%d%s", p.doneRuns+1, p.totalRuns, r.ID, done, total, p.eta(now, done, total))
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintf(p.w, "gcjitter: %s\n", line)
	}
}

func (p *progress) RunEnd(n, total int, r *results.Run) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.doneRuns++
	p.runSecs += r.Seconds
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	status := r.Status
	if r.Summary != nil {
		status = fmt.Sprintf("ok, p50 %s, p99 %s, gen2 %d", ms(r.Summary.P50), ms(r.Summary.P99), r.Summary.Collections[2])
	} else if r.Reason != "" {
		status += ": " + r.Reason
	}
	fmt.Fprintf(p.w, "gcjitter: run %d/%d %s (%.1fs): %s\n", n+1, total, r.ID, r.Seconds, status)
}

// eta estimates the time left: this run's pace for its own steps, the
// average finished run for the runs still to come.
func (p *progress) eta(now time.Time, done, total int) string {
	if done == 0 {
		return ""
	}
	el := now.Sub(p.runStart).Seconds()
	left := el / float64(done) * float64(total-done)
	per := el / float64(done) * float64(total)
	if p.doneRuns > 0 {
		per = p.runSecs / float64(p.doneRuns)
	}
	left += per * float64(p.totalRuns-p.doneRuns-1)
	return fmt.Sprintf(", ETA %s", (time.Duration(left) * time.Second).Round(time.Second))
}
