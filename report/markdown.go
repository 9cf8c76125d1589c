package report

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// Markdown writes a report for a CI step summary or a pull-request
// comment: the verdicts that matter first, then the tables.
func Markdown(w io.Writer, d *Doc) {
	n := d.Counts()
	fmt.Fprintf(w, "## %s\n\n", d.Title)
	if d.Comparison == nil && d.Manifest != nil && len(d.Schedules) == 0 {
		// One results directory: its runs, nothing compared.
		ok := 0
		for _, r := range d.Manifest.Runs {
			if r.Status == results.StatusOK {
				ok++
			}
		}
		answersMarkdown(w, d.Answers)
		fmt.Fprintf(w, "**%d of %d runs completed**\n", ok, len(d.Manifest.Runs))
		for _, r := range d.FailedRuns() {
			fmt.Fprintf(w, "- ⚠️ run `%s` %s: %s\n", r.ID, r.Status, mdEscape(r.Reason))
		}
		runSummaryMarkdown(w, d.Manifest)
		return
	}
	if p := d.Partial(); p != "" {
		fmt.Fprintf(w, "**⏸️ %s**\n\n", p)
	}
	answersMarkdown(w, d.Answers)
	failed := ""
	if len(d.FailedRuns()) > 0 {
		failed = fmt.Sprintf(", ⚠️ %d runs failed", len(d.FailedRuns()))
	}
	if pc := d.PolicyCounts(); pc != "" {
		fmt.Fprintf(w, "**every policy against `%s`**%s — %s\n\n", d.Comparison.Reference, failed, pc)
	} else {
		status := map[string]string{"regression": "❌ regression", "undecided": "⚠️ undecided", "no regression": "✅ no regression"}[d.Status()]
		if regs := d.Regressions(); len(regs) > 0 {
			status += ": " + mdEscape(regs[0])
			if len(regs) > 1 {
				status += fmt.Sprintf(" (and %d more)", len(regs)-1)
			}
		}
		fmt.Fprintf(w, "**%s**%s — %d regressed, %d improved, %d same, %d unknown (undecided: not a pass), %d descriptive\n\n",
			status, failed, n[stats.Regressed], n[stats.Improved], n[stats.Same], n[stats.Unknown], n[stats.Descriptive])
		if s := d.Comparison.SensitivityText(); s != "" {
			fmt.Fprintf(w, "%s\n\n", mdEscape(s))
		}
	}
	for _, s := range d.Schedules {
		switch {
		case len(s.Schedule) == 0:
			fmt.Fprintf(w, "- GC schedule of `%s`: unchanged\n", s.Golden.Case)
		case s.ScheduleFailed():
			fmt.Fprintf(w, "- ❌ GC schedule of `%s` changed in the same environment:\n", s.Golden.Case)
		default:
			fmt.Fprintf(w, "- GC schedule of `%s` changed with the environment (%s):\n", s.Golden.Case, strings.Join(s.EnvChanges, ", "))
		}
		for _, c := range s.Schedule {
			fmt.Fprintf(w, "  - `%s`: %s\n", c.Variant, strings.Join(c.Lines, "; "))
		}
	}
	for _, r := range d.FailedRuns() {
		fmt.Fprintf(w, "- ⚠️ run `%s` %s: %s\n", r.ID, r.Status, mdEscape(r.Reason))
	}
	if c := d.Comparison; c != nil {
		for _, v := range []stats.Verdict{stats.Regressed, stats.Improved, stats.Unknown} {
			for _, r := range c.Rows {
				if r.Verdict == v {
					fmt.Fprintf(w, "- **%s** `%s` %s: %s\n", c.Word(v), r.Bench, r.Metric, mdEscape(r.Reason))
				}
			}
		}
		for _, vv := range c.VariantVerdicts() {
			if len(vv.FewerLonger) > 0 {
				fmt.Fprintf(w, "- ⚠️ `%s`: %s\n", vv.Bench, mdEscape(vv.Reason))
			}
		}
		fmt.Fprintf(w, "\nold: `%s` · new: `%s` · runs are the unit; p: Mann-Whitney U, Holm-adjusted (alpha %g)\n", c.Old.Path, c.New.Path, c.Alpha)
		bench := ""
		for _, r := range c.Rows {
			if r.Bench != bench {
				bench = r.Bench
				fmt.Fprintf(w, "\n### `%s`\n\n", bench)
				if sp := spikeText(c, bench); sp != "" {
					fmt.Fprintf(w, "%s\n\n", sp)
				}
				fmt.Fprint(w, "| metric | old | new | change [interval] | p | n | verdict |\n|---|---|---|---|---|---|---|\n")
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %d+%d | %s |\n", r.Metric, fmtEst(r.OldEst, r.Unit, r.Exact), fmtEst(r.NewEst, r.Unit, r.Exact),
				fmtChange(r), fmtP(r), len(r.Old), len(r.New), verdictMark(c, r))
		}
		explainMarkdown(w, c)
		if len(c.Notes) > 0 {
			fmt.Fprintln(w, "\n<details><summary>notes</summary>")
			fmt.Fprintln(w)
			for _, note := range c.Notes {
				fmt.Fprintf(w, "- %s\n", mdEscape(note))
			}
			fmt.Fprintln(w, "\n</details>")
		}
	}
	if d.ShowsPolicies() {
		runSummaryMarkdown(w, d.Manifest)
	}
}

func verdictMark(c *results.Comparison, r *stats.Row) string {
	switch {
	case c.Reference != "":
		return fmtVerdict(c, r) // a policy worse than default is a finding: no alarm
	case r.Verdict == stats.Regressed:
		return "❌ regressed"
	case r.Verdict == stats.Improved:
		return "✅ improved"
	}
	return fmtVerdict(c, r)
}

// answersMarkdown writes what to set, per case, first.
func answersMarkdown(w io.Writer, answers []Answer) {
	if len(answers) == 0 {
		return
	}
	fmt.Fprintln(w, "### What to set")
	fmt.Fprintln(w)
	for _, a := range answers {
		fmt.Fprintf(w, "- `%s`: **%s**", a.Case, a.Headline())
		if a.Warning != "" {
			fmt.Fprintf(w, " (warning: %s)", mdEscape(a.Warning))
		}
		fmt.Fprintf(w, ": %s", mdEscape(cmp.Or(a.Err, a.Reason)))
		for _, s := range a.Settle {
			fmt.Fprintf(w, "; settle %s", mdEscape(s))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ", "<", "&lt;").Replace(s)
}
