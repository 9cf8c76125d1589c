package report

import (
	"fmt"
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
	// Answers are what to set, per case of a results directory that ran
	// several policies (advise.Answers): what a reader came for, so every
	// format puts them first.
	Answers []Answer
}

// Answer is advise's recommendation for one case, as a report shows it.
type Answer struct {
	Case string
	// Pick is the variant to set and Policy its GC policy; both "" when
	// the evidence is undecided or no policy qualifies.
	Pick, Policy string
	Undecided    bool
	// Reason says why; Warning what is worse about the pick than the
	// reference (its first line); Settle what would decide an undecided
	// answer.
	Reason, Warning string
	Settle          []string
	// Under are the constraints judged against: "a job of 8 h, memory
	// limit 23.4GiB (MemTotal)".
	Under string
	// Err says why no advice could be given (the case's runs failed, no
	// memory limit known).
	Err string
}

// Headline is the answer in a few words: "set manual:50", "keep default",
// "undecided", "no policy qualifies", "no advice".
func (a Answer) Headline() string {
	switch {
	case a.Err != "":
		return "no advice"
	case a.Undecided:
		return "undecided"
	case a.Pick == "":
		return "no policy qualifies"
	case a.Policy == "default":
		return "keep " + a.Pick
	}
	return "set " + a.Pick
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
// not pass: the data could not tell); else "no regression". Policies set
// side by side against a reference are none of these: "policies".
func (d *Doc) Status() string {
	if d.Comparison != nil && d.Comparison.Reference != "" {
		return "policies"
	}
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

// Regressions name what regressed, one line each, schedules first: the
// banner's first line on an old -> new page. Empty for policies side by
// side (a policy worse than default is a finding, not a regression).
func (d *Doc) Regressions() []string {
	if d.Comparison == nil || d.Comparison.Reference != "" {
		return nil
	}
	var out []string
	for _, s := range d.Schedules {
		if s.ScheduleFailed() {
			out = append(out, fmt.Sprintf("GC schedule of %s changed in the same environment", s.Golden.Case))
		}
	}
	for _, r := range d.Comparison.Rows {
		if r.Verdict == stats.Regressed {
			out = append(out, fmt.Sprintf("%s %s %s", r.Bench, r.Metric, fmtChange(r)))
		}
	}
	return out
}

// PolicyCounts tallies a policies-side-by-side comparison's tested verdicts
// in its words ("3 better · 5 worse · 2 same · 4 unknown"), "" otherwise.
func (d *Doc) PolicyCounts() string {
	c := d.Comparison
	if c == nil || c.Reference == "" {
		return ""
	}
	n := d.Counts()
	return fmt.Sprintf("%d better · %d worse · %d same · %d unknown (undecided) · %d descriptive",
		n[stats.Improved], n[stats.Regressed], n[stats.Same], n[stats.Unknown], n[stats.Descriptive])
}
