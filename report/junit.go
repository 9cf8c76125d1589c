package report

import (
	"encoding/xml"
	"fmt"
	"io"
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
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// JUnit writes JUnit XML: one testsuite per case, one testcase per variant
// and gated metric. A regression is a failure stating the metric, the
// change with its interval and the floor; a changed GC schedule is a
// failure of the variant's gc-schedule test; a run that crashed, hung or
// was interrupted is an error.
func JUnit(w io.Writer, d *Doc) error {
	suites := map[string]*junitSuite{}
	suite := func(name string) *junitSuite {
		if suites[name] == nil {
			suites[name] = &junitSuite{Name: "gcjitter." + name}
		}
		return suites[name]
	}
	add := func(s *junitSuite, c junitCase) {
		s.Tests++
		if c.Failure != nil {
			s.Failures++
		}
		if c.Error != nil {
			s.Errors++
		}
		s.Cases = append(s.Cases, c)
	}
	if c := d.Comparison; c != nil {
		for _, r := range c.Rows {
			caseName, variant := splitBench(r.Bench)
			tc := junitCase{Name: r.Metric, Classname: "gcjitter." + caseName + "." + variant,
				SystemOut: fmt.Sprintf("%s: %s", r.Verdict, r.Reason)}
			if r.Verdict == stats.Regressed {
				tc.Failure = &junitProblem{Type: "regressed",
					Message: fmt.Sprintf("%s of %s/%s regressed: %s (floor %s)", r.Metric, caseName, variant, fmtChange(r), stats.Pct(r.Floor)),
					Text:    r.Reason}
			}
			add(suite(caseName), tc)
		}
	}
	for _, s := range d.Schedules {
		changed := map[string][]string{}
		for _, c := range s.Schedule {
			changed[c.Variant] = c.Lines
		}
		for _, v := range s.Golden.Variants {
			tc := junitCase{Name: "gc-schedule", Classname: "gcjitter." + s.Golden.Case + "." + v.Name, SystemOut: "GC schedule unchanged"}
			if lines, ok := changed[v.Name]; ok {
				tc.SystemOut = "GC schedule changed: " + strings.Join(lines, "; ")
				if s.ScheduleFailed() {
					tc.Failure = &junitProblem{Type: "gc-schedule", Message: fmt.Sprintf("GC schedule of %s/%s changed in the same environment: %s",
						s.Golden.Case, v.Name, strings.Join(lines, "; ")), Text: strings.Join(lines, "\n")}
				} else {
					tc.SystemOut += " (environment changed: " + strings.Join(s.EnvChanges, ", ") + ")"
				}
			}
			add(suite(s.Golden.Case), tc)
		}
	}
	if d.Comparison == nil && d.Manifest != nil && len(d.Schedules) == 0 {
		// One results directory: each completed run is a passing test, so
		// a CI test tab shows what ran, not only what failed.
		for _, r := range d.Manifest.Runs {
			if r.Status == results.StatusOK {
				add(suite(r.Case), junitCase{Name: "run " + r.ID, Classname: "gcjitter." + r.Case + "." + r.Variant,
					SystemOut: fmt.Sprintf("%d steps in %.1f s", r.Steps, r.Seconds)})
			}
		}
	}
	for _, r := range d.FailedRuns() {
		add(suite(r.Case), junitCase{Name: "run " + r.ID, Classname: "gcjitter." + r.Case + "." + r.Variant,
			Error: &junitProblem{Type: r.Status, Message: r.Reason, Text: r.StderrTail}})
	}
	out := junitSuites{Name: "gcjitter " + d.Kind}
	names := make([]string, 0, len(suites))
	for n := range suites {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := suites[n]
		out.Suites = append(out.Suites, *s)
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Errors += s.Errors
	}
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
