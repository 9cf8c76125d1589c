package report

import (
	"html/template"
	"time"

	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Doc is everything a report can show: a comparison (compare, gate, ab),
// the GC-schedule layer of a gate, the runs that failed, and, for HTML, the
// step series of each side.
type Doc struct {
	Kind      string // run, compare, gate or ab
	Title     string
	Generated time.Time
	// Comparison is nil for the report of a plain run.
	Comparison *results.Comparison
	// Schedules are a gate's exact GC-schedule checks.
	Schedules []*golden.Result
	// Manifest is the newest run's manifest: environment, host facts,
	// failed runs. Nil for a comparison of plain benchfmt files.
	Manifest *results.Manifest
	// Steps, for HTML: per benchmark, the step series of each side
	// (index 0 old, 1 new; a plain run has only 1).
	Steps map[string][2]*results.Steps
	// Reference is the variant the others were compared with when the
	// comparison is one results directory's policies side by side
	// (results.CompareVariants); "" for a comparison of two inputs.
	Reference string
	// Scale is the chart of step time against ranks predicted from the
	// multi-rank runs (scale.ChartsFor); "" without them.
	Scale template.HTML
}

// Counts tallies the verdicts.
func (d *Doc) Counts() map[stats.Verdict]int {
	n := map[stats.Verdict]int{}
	if d.Comparison != nil {
		for _, r := range d.Comparison.Rows {
			n[r.Verdict]++
		}
	}
	return n
}

// Status is the comparison's state in a word, the one every banner shows:
// "regression" when a verdict regressed or a GC schedule changed in the
// same environment; "undecided" when a tested metric is unknown (it did
// not pass: the data could not tell); else "no regression".
func (d *Doc) Status() string {
	n := d.Counts()
	for _, s := range d.Schedules {
		if s.ScheduleFailed() {
			return "regression"
		}
	}
	switch {
	case n[stats.Regressed] > 0:
		return "regression"
	case n[stats.Unknown] > 0:
		return "undecided"
	}
	return "no regression"
}

// Partial says why the report covers less than was planned
// (results.Manifest.Partial); "" when it covers it all.
func (d *Doc) Partial() string {
	if d.Manifest == nil {
		return ""
	}
	return d.Manifest.Partial()
}

// ShowsPolicies reports whether the report shows a results directory's
// variants side by side (its runs alone, or compared with a reference
// variant): every format then prints the variants' table.
func (d *Doc) ShowsPolicies() bool {
	return d.Manifest != nil && (d.Comparison == nil || d.Reference != "")
}

// FailedRuns are the runs that crashed, hung or were interrupted.
func (d *Doc) FailedRuns() []*results.Run {
	var out []*results.Run
	if d.Manifest != nil {
		for _, r := range d.Manifest.Runs {
			if r.Status == results.StatusFailed || r.Status == results.StatusInterrupted {
				out = append(out, r)
			}
		}
	}
	return out
}
