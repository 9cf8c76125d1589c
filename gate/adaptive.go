package gate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Limits bound adaptive rounds (-max-runs, -budget): the gate or A/B keeps
// adding interleaved rounds of the cases whose primary metrics are still
// unknown until every one is decided or a limit is reached.
type Limits struct {
	MaxRuns int           // runs per variant at most; 0: no limit
	Budget  time.Duration // wall time from Start; 0: no limit
	Start   time.Time
}

func (l Limits) String() string {
	var parts []string
	if l.MaxRuns > 0 {
		parts = append(parts, fmt.Sprintf("-max-runs %d", l.MaxRuns))
	}
	if l.Budget > 0 {
		parts = append(parts, "-budget "+l.Budget.String())
	}
	return strings.Join(parts, ", ")
}

// On reports whether adaptive rounds were asked for.
func (l Limits) On() bool { return l.MaxRuns > 0 || l.Budget > 0 }

// Growth is what adaptive rounds did.
type Growth struct {
	Added   int           // rounds added, summed over the cases
	Steps   int           // times rounds were added
	Elapsed time.Duration // from Start to the last verdict: the time to verdict
	Decided bool          // every tested metric decided
	Stopped string        // why it stopped, in words
}

// Note is the growth as a line for the reports.
func (g Growth) Note() string {
	added := "no runs added"
	if g.Added > 0 {
		added = fmt.Sprintf("%d rounds added in %d steps", g.Added, g.Steps)
	}
	return fmt.Sprintf("adaptive rounds: %s; %s after %s", added, g.Stopped, g.Elapsed.Round(time.Second))
}

// Wanted is, per case, how many more rounds would likely decide its
// unknown tested rows (stats.Row.MoreRuns); a row that more runs cannot
// decide (its estimate at the floor, or a session drift as wide as its
// distance to the floor) wants none.
func Wanted(cmp *results.Comparison) map[string]int {
	want := map[string]int{}
	for _, r := range cmp.Rows {
		if r.Verdict != stats.Unknown || !r.Tested() || r.RunsNeeded <= 0 || r.RunsNeeded >= stats.MaxRunsNeeded {
			continue
		}
		c := results.CaseOf(r.Bench)
		want[c] = max(want[c], r.MoreRuns())
	}
	return want
}

// Rounds says how a command grows its runs: the runs per variant a case
// has now, the wall time one more round of it takes, and how to run more.
type Rounds struct {
	Runs      func(caseName string) int
	RoundTime func(caseName string) time.Duration
	More      func(ctx context.Context, rounds map[string]int) error
}

// Grow judges, and while some tested row is unknown and more runs would
// likely decide it, adds rounds (at most doubling a case's runs at a time:
// the estimate of the runs needed is rough) within the limits, and judges
// again. It returns the last comparison judge made; when adding runs
// fails (interrupted), with that error, judged on the runs that completed.
func Grow(ctx context.Context, lim Limits, judge func() (*results.Comparison, error), r Rounds) (*results.Comparison, Growth, error) {
	var g Growth
	for {
		cmp, err := judge()
		g.Elapsed = time.Since(lim.Start)
		if err != nil {
			return nil, g, err
		}
		unknown := 0
		for _, row := range cmp.Rows {
			if row.Verdict == stats.Unknown && row.Tested() {
				unknown++
			}
		}
		want := Wanted(cmp)
		switch {
		case unknown == 0:
			g.Decided, g.Stopped = true, "every tested metric decided"
			return cmp, g, nil
		case len(want) == 0:
			g.Stopped = fmt.Sprintf("%d metrics unknown that more runs would not decide (estimates at their floors, or within the session drift)", unknown)
			return cmp, g, nil
		}
		rounds := map[string]int{}
		for c, n := range want {
			cur := r.Runs(c)
			n = min(n, max(cur, 1))
			if lim.MaxRuns > 0 {
				n = min(n, lim.MaxRuns-cur)
			}
			if per := r.RoundTime(c); lim.Budget > 0 && per > 0 {
				n = min(n, int((lim.Budget-time.Since(lim.Start))/per))
			}
			if n > 0 {
				rounds[c] = n
			}
		}
		if len(rounds) == 0 {
			g.Stopped = fmt.Sprintf("%d metrics unknown when the limit was reached (%s)", unknown, lim)
			return cmp, g, nil
		}
		before := 0
		for c := range rounds {
			before += r.Runs(c)
		}
		if err := r.More(ctx, rounds); err != nil {
			// Cut short: judge what the rounds completed too.
			g.Stopped = "stopped: " + err.Error()
			if again, jerr := judge(); jerr == nil {
				cmp = again
			}
			g.Elapsed = time.Since(lim.Start)
			return cmp, g, err
		}
		after := 0
		for c := range rounds {
			after += r.Runs(c)
		}
		g.Steps++
		g.Added += after - before
	}
}

// ManifestRounds are Rounds over a results directory's manifest: its
// cases' run counts, and a round's time from the mean time of the runs
// each variant made so far.
func ManifestRounds(m *results.Manifest, more func(ctx context.Context, rounds map[string]int) error) Rounds {
	return Rounds{
		Runs: func(name string) int {
			for _, c := range m.Cases {
				if c.Name == name {
					return c.Runs
				}
			}
			return 0
		},
		RoundTime: func(name string) time.Duration { return roundTime(m, name, nil) },
		More:      more,
	}
}

// ContestRounds are ManifestRounds whose rounds run only some variants of
// each case (its contenders, by case): a round's time is theirs alone.
func ContestRounds(m *results.Manifest, contenders map[string][]string, more func(ctx context.Context, rounds map[string]int) error) Rounds {
	r := ManifestRounds(m, more)
	r.RoundTime = func(name string) time.Duration { return roundTime(m, name, contenders[name]) }
	return r
}

// roundTime is the mean time of the case's completed runs times the number
// of variants a round runs: those in only, or all the case's when nil.
func roundTime(m *results.Manifest, name string, only []string) time.Duration {
	sum, n, variants := 0.0, 0, map[string]bool{}
	for _, run := range m.Runs {
		if run.Case == name && run.Status == results.StatusOK && (only == nil || slices.Contains(only, run.Variant)) {
			sum += run.Seconds
			n++
			variants[run.Variant] = true
		}
	}
	if n == 0 {
		return 0
	}
	return time.Duration(sum / float64(n) * float64(len(variants)) * float64(time.Second))
}
