package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
	seconds  float64
}

type junitCase struct {
	Name      string `xml:"name,attr"`
	Classname string `xml:"classname,attr"`
	// Time is the seconds the runs behind the test took (a metric's:
	// its benchmark's runs on the new side), as CI parsers expect.
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// junitSkipped is an undecided verdict: not a pass (CI shows it apart),
// with the reason and what would decide it.
type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// JUnit writes JUnit XML: one testsuite per case, one testcase per variant
// and tested metric (descriptive metrics are not tests and are left out).
// A regression is a failure stating the metric, the change with its
// interval and the floor; an unknown verdict is skipped with its reason
// (undecided is not a pass); a changed GC schedule is a failure of the
// variant's gc-schedule test; a run that crashed, hung or was interrupted
// is an error.
func JUnit(w io.Writer, d *Doc) error {
	suites := map[string]*junitSuite{}
	suite := func(name string) *junitSuite {
		if suites[name] == nil {
			suites[name] = &junitSuite{Name: "gcjitter." + name}
		}
		return suites[name]
	}
	add := func(s *junitSuite, c junitCase, seconds float64) {
		s.Tests++
		if c.Failure != nil {
			s.Failures++
		}
		if c.Error != nil {
			s.Errors++
		}
		if c.Skipped != nil {
			s.Skipped++
		}
		c.Time = fmt.Sprintf("%.3f", seconds)
		s.seconds += seconds
		s.Cases = append(s.Cases, c)
	}
	benchSeconds := map[string]float64{} // the new side's run time per benchmark
	if d.Manifest != nil {
		for _, r := range d.Manifest.Runs {
			benchSeconds[results.BenchName(r.Case, r.Variant)] += r.Seconds
		}
	}
	if c := d.Comparison; c != nil {
		for _, r := range c.Rows {
			if r.Verdict == stats.Descriptive {
				continue
			}
			caseName, variant := splitBench(r.Bench)
			tc := junitCase{Name: r.Metric, Classname: "gcjitter." + caseName + "." + variant,
				SystemOut: fmt.Sprintf("%s: %s", r.Verdict, r.Reason)}
			switch r.Verdict {
			case stats.Regressed:
				tc.Failure = &junitProblem{Type: "regressed",
					Message: fmt.Sprintf("%s of %s/%s regressed: %s (floor %s)", r.Metric, caseName, variant, fmtChange(r), stats.Pct(r.Floor)),
					Text:    r.Reason}
			case stats.Unknown:
				tc.Skipped = &junitSkipped{Message: fmt.Sprintf("undecided: %s", r.Reason)}
			}
			add(suite(caseName), tc, benchSeconds[r.Bench])
		}
	}
	for _, s := range d.Schedules {
		changed := map[string][]string{}
		for _, c := range s.Schedule {
			changed[c.Variant] = c.Lines
		}
		for _, v := range s.Golden.Variants {
			tc := junitCase{Name: "gc-schedule", Classname: "gcjitter." + s.Golden.Case + "." + v.Name, SystemOut: "GC schedule unchanged"}
			if _, moved := changed[v.Name]; !moved && !slices.Contains(s.ScheduleCompared, v.Name) {
				// Not compared (left out by -filter, no completed run, or
				// the baseline's runs disagreed): not a pass.
				tc.SystemOut = ""
				tc.Skipped = &junitSkipped{Message: "GC schedule not compared"}
				prefix := s.Golden.Case + "/" + v.Name + ": "
				for _, n := range s.Notes {
					if strings.HasPrefix(n, prefix) {
						tc.Skipped.Message = "GC schedule not compared: " + strings.TrimPrefix(n, prefix)
					}
				}
			}
			if lines, ok := changed[v.Name]; ok {
				tc.SystemOut = "GC schedule changed: " + strings.Join(lines, "; ")
				if s.ScheduleFailed() {
					tc.Failure = &junitProblem{Type: "gc-schedule", Message: fmt.Sprintf("GC schedule of %s/%s changed in the same environment: %s",
						s.Golden.Case, v.Name, strings.Join(lines, "; ")), Text: strings.Join(lines, "\n")}
				} else {
					tc.SystemOut += " (environment changed: " + strings.Join(s.EnvChanges, ", ") + ")"
				}
			}
			add(suite(s.Golden.Case), tc, 0)
		}
	}
	if d.Comparison == nil && d.Manifest != nil && len(d.Schedules) == 0 {
		// One results directory: each completed run is a passing test, so
		// a CI test tab shows what ran, not only what failed.
		for _, r := range d.Manifest.Runs {
			if r.Status == results.StatusOK {
				add(suite(r.Case), junitCase{Name: "run " + r.ID, Classname: "gcjitter." + r.Case + "." + r.Variant,
					SystemOut: fmt.Sprintf("%d steps in %.1f s", r.Steps, r.Seconds)}, r.Seconds)
			}
		}
	}
	for _, r := range d.FailedRuns() {
		add(suite(r.Case), junitCase{Name: "run " + r.ID, Classname: "gcjitter." + r.Case + "." + r.Variant,
			Error: &junitProblem{Type: r.Status, Message: r.Reason, Text: r.StderrTail}}, r.Seconds)
	}
	if p := d.Partial(); p != "" {
		// A gate cut short did not pass: an error CI shows, not a silence.
		add(suite("plan"), junitCase{Name: "every planned run ended", Classname: "gcjitter.plan",
			Error: &junitProblem{Type: "partial", Message: p}}, 0)
	}
	out := junitSuites{Name: "gcjitter " + d.Kind}
	if d.Partial() != "" {
		out.Name += " (partial)"
	}
	total := 0.0
	names := make([]string, 0, len(suites))
	for n := range suites {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := suites[n]
		s.Time = fmt.Sprintf("%.3f", s.seconds)
		out.Suites = append(out.Suites, *s)
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Errors += s.Errors
		out.Skipped += s.Skipped
		total += s.seconds
	}
	out.Time = fmt.Sprintf("%.3f", total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// splitBench turns GCJitter/case=C/variant=V into C and V; other names
// (foreign benchfmt) keep the whole name as the case.
func splitBench(b string) (string, string) {
	rest, ok := strings.CutPrefix(b, "GCJitter/case=")
	if !ok {
		return b, "-"
	}
	c, v, ok := strings.Cut(rest, "/variant=")
	if !ok {
		return rest, "-"
	}
	return c, v
}
