package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// ExplainHeader is what the table of parts says it shows, in every format.
const ExplainHeader = "what moved the step and its tail, by part (time per step: the mean step and the collections between steps; tail: the mean of the slowest 1% of steps, what p99 describes)"

// explainColumns are the table's columns, in every format.
var explainColumns = []string{"part", "time per step", "gc-share", "tail (slowest 1%)"}

// explainTable is one benchmark's parts as the cells every format prints.
type explainTable struct {
	Bench string
	Note  string // what the parts rest on, when the heap was not measured
	Rows  [][]string
}

// explainTables are the comparison's explanations (results.Comparison
// Explain), formatted once for every format.
func explainTables(c *results.Comparison) []explainTable {
	if c == nil {
		return nil
	}
	var out []explainTable
	for _, e := range c.Explain() {
		t := explainTable{Bench: e.Bench}
		if !e.Census {
			t.Note = "no full collection with a heap census on both sides: the heap walked is left in the cost per collection"
		}
		for _, p := range e.Parts {
			t.Rows = append(t.Rows, []string{p.Name, deltaOf(p.Step, e.OldStep), points(p.Share), deltaOf(p.Tail, e.OldTail)})
		}
		out = append(out, t)
	}
	return out
}

// points prints a change of the GC share in percentage points ("+0.38
// pt"; "0 pt" under 0.005).
func points(share float64) string {
	if math.Abs(100*share) < 0.005 {
		return "0 pt"
	}
	return fmt.Sprintf("%+.2f pt", 100*share)
}

// deltaOf is a change in time with its share of the old value: "+40µs
// (+0.39%)".
func deltaOf(ns, old float64) string {
	s := signedDur(ns)
	if old > 0 && ns != 0 {
		s += " (" + stats.Pct(ns/old) + ")"
	}
	return s
}

// signedDur prints nanoseconds as a signed duration of 3 significant
// digits ("+40µs", "-2.02ms", "0").
func signedDur(ns float64) string {
	if ns == 0 || math.IsNaN(ns) {
		return "0"
	}
	d := time.Duration(math.Abs(ns))
	for unit := time.Duration(1); unit <= time.Hour; unit *= 10 {
		if d < 1000*unit {
			d = d.Round(unit)
			break
		}
	}
	if d == 0 {
		return fmt.Sprintf("%+.2gns", ns)
	}
	if ns < 0 {
		return "-" + d.String()
	}
	return "+" + d.String()
}

// explainText writes the tables as text.
func explainText(w io.Writer, c *results.Comparison) {
	tables := explainTables(c)
	if len(tables) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s:\n", ExplainHeader)
	for _, t := range tables {
		fmt.Fprintf(w, "%s\n", t.Bench)
		if t.Note != "" {
			fmt.Fprintf(w, "  (%s)\n", t.Note)
		}
		width := make([]int, len(explainColumns))
		for _, row := range append([][]string{explainColumns}, t.Rows...) {
			for i, cell := range row {
				width[i] = max(width[i], len([]rune(cell)))
			}
		}
		for _, row := range append([][]string{explainColumns}, t.Rows...) {
			var line strings.Builder
			for i, cell := range row {
				fmt.Fprintf(&line, "  %-*s", width[i], cell) // fmt pads by runes
			}
			fmt.Fprintln(w, strings.TrimRight(line.String(), " "))
		}
	}
}

// explainMarkdown writes the tables as Markdown.
func explainMarkdown(w io.Writer, c *results.Comparison) {
	tables := explainTables(c)
	if len(tables) == 0 {
		return
	}
	fmt.Fprintf(w, "\n### %s\n", mdEscape(ExplainHeader))
	for _, t := range tables {
		fmt.Fprintf(w, "\n`%s`", t.Bench)
		if t.Note != "" {
			fmt.Fprintf(w, " (%s)", mdEscape(t.Note))
		}
		fmt.Fprint(w, "\n\n| part | time per step | gc-share | tail (slowest 1%) |\n|---|---|---|---|\n")
		for _, row := range t.Rows {
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", row[0], row[1], row[2], row[3])
		}
	}
}

// jsonExplanation is a benchmark's parts in JSON: times in ns, gc-share
// in its own unit (0.01 is one point).
type jsonExplanation struct {
	Bench    string     `json:"bench"`
	Census   bool       `json:"census"`
	OldStep  float64    `json:"old_step_ns"`
	OldShare float64    `json:"old_gc_share"`
	OldTail  float64    `json:"old_tail_ns"`
	Parts    []jsonPart `json:"parts"`
}

type jsonPart struct {
	Part  string  `json:"part"`
	Step  float64 `json:"step_ns"`
	Share float64 `json:"gc_share"`
	Tail  float64 `json:"tail_ns"`
}

func explainJSON(c *results.Comparison) []jsonExplanation {
	if c == nil {
		return nil
	}
	var out []jsonExplanation
	for _, e := range c.Explain() {
		je := jsonExplanation{Bench: e.Bench, Census: e.Census, OldStep: e.OldStep, OldShare: e.OldShare, OldTail: e.OldTail}
		for _, p := range e.Parts {
			je.Parts = append(je.Parts, jsonPart{Part: p.Name, Step: p.Step, Share: p.Share, Tail: p.Tail})
		}
		out = append(out, je)
	}
	return out
}
