// Package progress shows runs as they go, on a terminal or in a CI log.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// New shows runs as they go. On a terminal: a live block with one
// line per variant of the case in progress (runs done, the current step,
// ETA), redrawn in place, with each finished run printed above it. Elsewhere
// (CI logs): a line per run start and end, and one every 30 s in between.
func New(w io.Writer) *Progress {
	p := &Progress{w: w, every: 30 * time.Second, now: time.Now}
	if f, ok := w.(*os.File); ok && os.Getenv("TERM") != "dumb" {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty, p.every = true, 200*time.Millisecond
		}
	}
	return p
}

type Progress struct {
	w     io.Writer
	tty   bool
	every time.Duration
	now   func() time.Time

	mu       sync.Mutex
	runs     []*results.Run
	cur      *results.Run
	curStart time.Time
	step     int
	steps    int
	last     time.Time
	drawn    int // lines of the live block on screen
}

func (p *Progress) Begin(runs []*results.Run) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.runs = runs
}

func (p *Progress) RunStart(n, total int, r *results.Run) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cur, p.curStart, p.step, p.steps, p.last = r, p.now(), 0, 0, p.now()
	if p.tty {
		p.redraw()
	} else {
		fmt.Fprintf(p.w, "gcjitter: run %d/%d %s\n", n+1, total, r.ID)
	}
}

func (p *Progress) Step(r *results.Run, done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.step, p.steps = done, total
	now := p.now()
	if now.Sub(p.last) < p.every {
		return
	}
	p.last = now
	if p.tty {
		p.redraw()
	} else {
		fmt.Fprintf(p.w, "gcjitter: run %s: step %d/%d%s\n", r.ID, done, total, fmtETA(p.etaAll(now)))
	}
}

func (p *Progress) RunEnd(n, total int, r *results.Run) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	status := r.Status
	if r.Summary != nil {
		status = fmt.Sprintf("ok, p50 %s, p99 %s, gen2 %d", stats.MS(r.Summary.P50), stats.MS(r.Summary.P99), r.Summary.Collections[2])
	} else if r.Reason != "" {
		status += ": " + r.Reason
	}
	fmt.Fprintf(p.w, "gcjitter: run %d/%d %s (%.1fs): %s\n", n+1, total, r.ID, r.Seconds, status)
	p.cur = nil
	if p.tty {
		p.redraw()
	}
}

// clear erases the live block.
func (p *Progress) clear() {
	if p.drawn > 0 {
		fmt.Fprintf(p.w, "\033[%dF\033[J", p.drawn)
		p.drawn = 0
	}
}

func (p *Progress) redraw() {
	p.clear()
	lines := p.block(p.now())
	for _, l := range lines {
		fmt.Fprintf(p.w, "\033[K%s\n", l)
	}
	p.drawn = len(lines)
}

// block renders one line per variant of the case in progress.
func (p *Progress) block(now time.Time) []string {
	if p.cur == nil {
		return nil
	}
	type agg struct {
		name             string
		done, total, bad int
		secs             float64
	}
	var order []*agg
	byName := map[string]*agg{}
	for _, r := range p.runs {
		if r.Case != p.cur.Case {
			continue
		}
		a := byName[r.Variant]
		if a == nil {
			a = &agg{name: r.Variant}
			byName[r.Variant] = a
			order = append(order, a)
		}
		a.total++
		switch r.Status {
		case results.StatusOK:
			a.done++
			a.secs += r.Seconds
		case results.StatusFailed, results.StatusInterrupted:
			a.done++
			a.bad++
		}
	}
	width := 0
	for _, a := range order {
		width = max(width, len(a.name))
	}
	var lines []string
	for _, a := range order {
		var b strings.Builder
		fmt.Fprintf(&b, "  %-*s  run %d/%d", width, a.name, min(a.done+1, a.total), a.total)
		if a.name == p.cur.Variant && p.steps == 0 {
			b.WriteString("  starting")
		} else if a.name == p.cur.Variant {
			fmt.Fprintf(&b, "  step %d/%d", p.step, p.steps)
		} else if a.done == a.total {
			b.WriteString("  done")
		} else {
			b.WriteString("  waiting")
		}
		if a.bad > 0 {
			fmt.Fprintf(&b, "  (%d failed)", a.bad)
		}
		if left := a.total - a.done; left > 0 {
			per := p.perRun(now)
			eta := per * float64(left)
			if a.name == p.cur.Variant {
				eta -= now.Sub(p.curStart).Seconds()
			}
			b.WriteString(fmtETA(eta))
		}
		lines = append(lines, b.String())
	}
	return lines
}

// perRun estimates one run's seconds: the average finished run, or the
// current run's pace so far.
func (p *Progress) perRun(now time.Time) float64 {
	var secs float64
	var n int
	for _, r := range p.runs {
		if r.Status == results.StatusOK {
			secs += r.Seconds
			n++
		}
	}
	if n > 0 {
		return secs / float64(n)
	}
	if p.step > 0 && p.steps > 0 {
		return now.Sub(p.curStart).Seconds() / float64(p.step) * float64(p.steps)
	}
	return 0
}

// etaAll is the seconds left for the whole invocation.
func (p *Progress) etaAll(now time.Time) float64 {
	left := 0
	for _, r := range p.runs {
		if r.Status == results.StatusPending {
			left++
		}
	}
	return p.perRun(now)*float64(left) - now.Sub(p.curStart).Seconds()
}

func fmtETA(secs float64) string {
	if secs <= 0 {
		return ""
	}
	return fmt.Sprintf("  ETA %s", (time.Duration(secs) * time.Second).Round(time.Second))
}
