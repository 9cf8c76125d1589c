package fit

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText prints the fit as gcjitter fit reports it: the case file
// written (fitted from dir, the trials' streams kept in trials), where each
// number came from, how much of the traced tail GC explains, and the
// variants the trace supports.
func (r *Result) WriteText(w io.Writer, file, dir, trials string) {
	fmt.Fprintf(w, "%s: fitted from %s (%d trials, streams in %s)\n", file, dir, len(r.Trials), trials)
	for _, s := range r.Story {
		fmt.Fprintf(w, "  %s\n", s)
	}
	fmt.Fprintf(w, "  %s\n", r.Target.Tail)
	if !r.Target.Tail.Explained() {
		fmt.Fprintln(w, "  the case reproduces the job's GC schedule, not its tail")
	}
	for _, v := range r.Variants() {
		fmt.Fprintf(w, "  variant %s: %s\n", v.Policy, v.Why)
	}
}

// WriteCheck prints -check's table: the fitted case file's default
// variant, got at the traced size (Check at r.Steps), against the trace,
// each figure with its tolerance. It returns how many figures are beyond
// their tolerance: any is a failed reproduction (the command's exit 1).
func (r *Result) WriteCheck(w io.Writer, file string, got Schedule) (beyond int) {
	t := r.Target
	fmt.Fprintf(w, "\ncheck: %s's default variant (%d runs of %d steps, the traced run's size) against the trace\n", file, CheckRuns, r.Steps)
	fmt.Fprintf(w, "%s\n", t.Tail)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "figure\ttraced\treproduced\tchange\ttolerance\t")
	for _, row := range Compare(t, got) {
		tol, verdict := "-", ""
		if row.Undecided != "" {
			tol = row.Undecided
		}
		if row.Judged {
			tol = fmt.Sprintf("±%.0f%%", 100*row.Tolerance)
			if row.Slack > 0 {
				tol += " or 1 per run"
			}
			if !row.Within {
				verdict, beyond = " beyond", beyond+1
			}
		}
		fmt.Fprintf(tw, "%s\t%.3f %s\t%.3f %s\t%+.1f%%%s\t%s\t\n", row.Name, row.Traced, row.Unit, row.Got, row.Unit, 100*row.RelativeChange, verdict, tol)
	}
	tw.Flush()
	if !t.Tail.Explained() {
		fmt.Fprintln(w, "p99 is not reproduced: the traced tail is not GC's")
	}
	if beyond > 0 {
		fmt.Fprintf(w, "%d figures beyond their tolerance\n", beyond)
	}
	return beyond
}
