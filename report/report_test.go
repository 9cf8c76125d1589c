package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"html/template"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/internal/testbrowser"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// fixture is a fixed comparison with every verdict: a p99 regression, an
// improved median, an exact schedule change, same and unknown metrics, a
// failed run and a gate's schedule diff.
func fixture() *Doc {
	old, new := results.NewData("old"), results.NewData("new")
	rng := rand.New(rand.NewPCG(1, 2))
	const a, b = "GCJitter/case=demo/variant=default", "GCJitter/case=demo/variant=manual:50"
	for range 10 {
		noise := func() float64 { return 1 + 0.01*rng.NormFloat64() }
		old.AddIters(a, 2000)
		new.AddIters(a, 2000)
		old.AddValue(a, "p50-ns/step", 40e6*noise())
		new.AddValue(a, "p50-ns/step", 40.1e6*noise())
		old.AddValue(a, "p99-ns/step", 50e6*noise())
		new.AddValue(a, "p99-ns/step", 65e6*noise())
		old.AddValue(a, "gen2-collections/kstep", 25)
		new.AddValue(a, "gen2-collections/kstep", 30)
		old.AddIters(b, 2000)
		new.AddIters(b, 2000)
		old.AddValue(b, "p50-ns/step", 42e6*noise())
		new.AddValue(b, "p50-ns/step", 36e6*noise())
		old.AddValue(b, "max-ns/step", 90e6*(1+0.3*rng.NormFloat64()))
		new.AddValue(b, "max-ns/step", 95e6*(1+0.3*rng.NormFloat64()))
	}
	for range 10 { // a primary metric too noisy to decide: unknown
		old.AddValue(b, "gc-share", 0.10*(1+0.3*rng.NormFloat64()))
		new.AddValue(b, "gc-share", 0.105*(1+0.3*rng.NormFloat64()))
	}
	// Run summaries, as a results directory has them, so the spike line is
	// golden-tested: periodic spikes (old default), spikes periodic in only
	// half the runs, so no period (new default), a side without summaries
	// (old manual:50, like benchfmt input) and a side without spikes.
	for i := range 10 {
		old.Runs[a] = append(old.Runs[a], stats.RunSummary{Steps: 2000, Spikes: 50, SpikesWithGC: 48, SpikePeriod: 40 + float64(i%3)})
		newRun := stats.RunSummary{Steps: 2000, Spikes: 62 + 2*(i%2), SpikesWithGC: 30}
		if i%2 == 0 {
			newRun.SpikePeriod = 33
		}
		new.Runs[a] = append(new.Runs[a], newRun)
		new.Runs[b] = append(new.Runs[b], stats.RunSummary{Steps: 2000})
	}
	c := results.Compare(old, new, results.CompareOptions{})
	g := &golden.Golden{Case: "demo", HostClass: "ci-cpu", Provenance: golden.Provenance{Date: "2026-11-29T14:58:30Z", Tool: "v0.0.0-20261129145830-0123456789ab"}, Env: golden.Env{Python: "3.11.2", Build: "main", Torch: "1.13.0", Device: "cpu"},
		Variants: []golden.Variant{{Name: "default"}, {Name: "manual:50"}}}
	sched := &golden.Result{Golden: g, Path: "golden/ci-cpu/demo.json", ScheduleCompared: []string{"default", "manual:50"},
		Schedule: []golden.ScheduleDiff{{Variant: "default", Lines: []string{"gen2 collections: 5 -> 6"}}}}
	m := &results.Manifest{Runs: []*results.Run{{ID: "demo/default/run-03", Case: "demo", Variant: "default", Status: results.StatusFailed,
		Reason: "worker killed by SIGKILL after 120 steps", StderrTail: "Killed"}}}
	return &Doc{Kind: "gate", Title: "gcjitter gate: host class ci-cpu", Generated: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
		Comparison: c, Schedules: []*golden.Result{sched}, Manifest: m}
}

// TestGoldenOutputs: the text, Markdown and JSON reports are stable
// (ordering and number formatting); go test ./report -update rewrites them.
func TestGoldenOutputs(t *testing.T) {
	for _, format := range []string{"text", "markdown", "json"} {
		t.Run(format, func(t *testing.T) {
			var b bytes.Buffer
			if err := Render(&b, format, fixture()); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "fixture"+Ext(format)+".golden")
			if *update {
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./report -update to create it)", err)
			}
			if got := b.String(); got != string(want) {
				t.Errorf("%s output differs from %s (go test ./report -update to accept):\n%s", format, path, got)
			}
		})
	}
}

func TestVerdictsInFixture(t *testing.T) {
	got := map[string]stats.Verdict{}
	for _, r := range fixture().Comparison.Rows {
		got[r.Bench[strings.LastIndex(r.Bench, "=")+1:]+" "+r.Metric] = r.Verdict
	}
	for k, v := range map[string]stats.Verdict{"default p99": stats.Regressed, "manual:50 p50": stats.Improved,
		"default gen2-collections": stats.Regressed, "default p50": stats.Same, "manual:50 gc-share": stats.Unknown,
		"manual:50 max": stats.Descriptive} {
		if got[k] != v {
			t.Errorf("%s: %s, want %s (the fixture must show every verdict)", k, got[k], v)
		}
	}
}

// TestJUnitLoadsInAParser parses the JUnit XML with Python's XML parser
// and checks what the JUnit schema (and CI parsers) require: testsuite
// name/tests/failures/errors, testcase name, counts that add up, and a
// failure message naming the metric, the change with its interval and
// the floor.
func TestJUnitLoadsInAParser(t *testing.T) {
	var b bytes.Buffer
	if err := JUnit(&b, fixture()); err != nil {
		t.Fatal(err)
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	script := `
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.stdin).getroot()
assert root.tag == "testsuites", root.tag
total = [0, 0, 0]
for s in root.findall("testsuite"):
    for a in ("name", "tests", "failures", "errors"):
        assert a in s.attrib, (s.attrib, a)
    cases = s.findall("testcase")
    f = sum(1 for c in cases if c.find("failure") is not None)
    e = sum(1 for c in cases if c.find("error") is not None)
    k = sum(1 for c in cases if c.find("skipped") is not None)
    assert (int(s.get("tests")), int(s.get("failures")), int(s.get("errors")), int(s.get("skipped"))) == (len(cases), f, e, k), s.attrib
    assert not any(c.get("name") == "max" for c in cases), "a descriptive metric is not a test"
    for c in cases:
        assert c.get("name") and c.get("classname"), c.attrib
        float(c.get("time"))  # every testcase has a time (seconds)
        for bad in c.findall("failure") + c.findall("error") + c.findall("skipped"):
            print("%s %s %s: %s" % (bad.tag, c.get("classname"), c.get("name"), bad.get("message")))
    total = [total[0] + len(cases), total[1] + f, total[2] + e]
assert total == [int(root.get("tests")), int(root.get("failures")), int(root.get("errors"))], (total, root.attrib)
`
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = &b
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the XML does not hold up in a parser: %v\n%s", err, out)
	}
	for _, want := range []string{
		"failure gcjitter.demo.default p99: p99 of demo/default regressed: +29.7% [+28.6%, +31.4%]",
		"(floor +3.00%)",
		// Undecided is not a pass: skipped, with why.
		"skipped gcjitter.demo.manual:50 gc-share: undecided: ",
		"failure gcjitter.demo.default gc-schedule: GC schedule of demo/default changed in the same environment: gen2 collections: 5 -> 6",
		"error gcjitter.demo.default run demo/default/run-03: worker killed by SIGKILL after 120 steps",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("parsed JUnit lacks %q:\n%s", want, out)
		}
	}
}

// syntheticSteps is n steps of about 40 ms with a full collection (and a
// spike) every 40 steps.
func syntheticSteps(runs, n int, scale float64) *results.Steps {
	rng := rand.New(rand.NewPCG(uint64(n), 3))
	s := &results.Steps{}
	for range runs {
		durs, gcs := make([]float64, n), make([]uint8, n)
		for i := range n {
			durs[i] = 40e6 * scale * math.Exp(0.05*rng.NormFloat64())
			if i%3 == 0 {
				gcs[i] |= results.GenBit(0)
			}
			if i%40 == 7 {
				durs[i] += 30e6
				gcs[i] |= results.GenBit(2)
			}
		}
		s.Runs, s.GC = append(s.Runs, durs), append(s.GC, gcs)
	}
	return s
}

func TestDownsampleKeepsEverySpike(t *testing.T) {
	s := syntheticSteps(1, 1_000_000, 1)
	line, marks := downsample(s.Runs[0], s.GC[0], SeriesPoints)
	if len(line) > 2*SeriesPoints+2 {
		t.Errorf("%d line points, want at most %d", len(line), 2*SeriesPoints+2)
	}
	// Every bucket holds spikes here; each bucket's max must be one.
	for _, p := range line {
		if p.Y > 60 && int(p.X)%40 != 7 {
			t.Fatalf("a point above 60 ms at step %v that is not a spike", p.X)
		}
	}
	spikesKept := 0
	for _, p := range line {
		if int(p.X)%40 == 7 {
			spikesKept++
		}
	}
	if spikesKept < SeriesPoints-1 {
		t.Errorf("only %d buckets kept their spike", spikesKept)
	}
	if len(marks[0]) != 0 || len(marks[2]) < SeriesPoints-1 {
		t.Errorf("markers: %d young (want none when downsampled), %d full", len(marks[0]), len(marks[2]))
	}
}

// TestHTMLInChromium renders the report in headless Chromium: the page
// must run its script (no JavaScript error stops it), hold the charts as
// inline SVG, and load nothing from the network. A screenshot is kept in
// the test's temp dir (GCJITTER_SCREENSHOT=path keeps it elsewhere).
func TestHTMLInChromium(t *testing.T) {
	browser := testbrowser.New(t)
	d := fixture()
	d.Steps = map[string][2]*results.Steps{
		"GCJitter/case=demo/variant=default": {syntheticSteps(2, 400, 1), syntheticSteps(2, 400, 1.1)},
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if err := HTML(&b, d); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte("src=\"http")) || bytes.Contains(b.Bytes(), []byte("href=\"http")) {
		t.Error("the page loads something over the network")
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := os.Getenv("GCJITTER_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(dir, "report.png")
	}
	dom, err := browser.DOM(page)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(dom, []byte(`data-ready="1"`)) {
		t.Error("the page's script did not run to the end (a JavaScript error?)")
	}
	if n := bytes.Count(dom, []byte("<svg")); n < 4 {
		t.Errorf("%d inline SVG charts in the rendered page, want at least 4", n)
	}
	if err := browser.Screenshot(page, shot, 1300, 2400); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 20_000 {
		t.Errorf("screenshot %s missing or blank: %v", shot, err)
	}
}

func TestColourOnlyWhenAsked(t *testing.T) {
	var plain, colored bytes.Buffer
	d := fixture()
	Text(&plain, d.Comparison)
	TextColor(&colored, d.Comparison, true)
	if bytes.Contains(plain.Bytes(), []byte("\033[")) {
		t.Error("escape codes without colour")
	}
	if !bytes.Contains(colored.Bytes(), []byte("\033[31;1mregressed\033[0m")) {
		t.Error("a regression is not red with colour on")
	}
	// RenderColor is how a command colours text it buffers for a terminal.
	var rendered bytes.Buffer
	if err := RenderColor(&rendered, "text", d, true); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(rendered.Bytes(), []byte("\033[31;1mregressed\033[0m")) {
		t.Error("RenderColor(..., true) does not colour the text")
	}
}

// TestColorFor is the decision every command makes for its standard
// output: colour on a terminal only, never with NO_COLOR or TERM=dumb,
// never into a buffer or a file.
func TestColorFor(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "xterm")
	// A pseudo-terminal stands in for the user's terminal.
	tty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer tty.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "report.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for _, c := range []struct {
		name, noColor, term string
		w                   io.Writer
		want                bool
	}{
		{"terminal", "", "xterm", tty, true},
		{"terminal without TERM", "", "", tty, true},
		{"terminal with NO_COLOR", "1", "xterm", tty, false},
		{"dumb terminal", "", "dumb", tty, false},
		{"file", "", "xterm", file, false},
		{"buffer", "", "xterm", &bytes.Buffer{}, false},
	} {
		t.Setenv("NO_COLOR", c.noColor)
		t.Setenv("TERM", c.term)
		if got := ColorFor(c.w); got != c.want {
			t.Errorf("%s: ColorFor = %v, want %v", c.name, got, c.want)
		}
	}
	// Render decides by its writer: a file never gets escape codes, even
	// where a terminal would.
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "xterm")
	for _, format := range []string{"text", "markdown", "json", "junit", "html"} {
		if err := Render(file, format, fixture()); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(file.Name())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("\033[")) {
		t.Error("escape codes in a report written to a file")
	}
}

// TestHTMLPerRankView: the per-rank view is its own figure, with an id and
// the ranks named, only when a side has per-rank data; a single-rank page
// says nothing about ranks.
func TestHTMLPerRankView(t *testing.T) {
	const bench = "GCJitter/case=demo/variant=default"
	render := func(ranks int) string {
		d := fixture()
		s := syntheticSteps(1, 200, 1)
		for r := range ranks {
			pauses := make([]float64, 200)
			pauses[7+r] = 5e6
			s.RankPause = append(s.RankPause, pauses)
		}
		d.Steps = map[string][2]*results.Steps{bench: {syntheticSteps(1, 200, 1), s}}
		var b bytes.Buffer
		if err := HTML(&b, d); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	multi := render(3)
	if want := `<figure class="per-rank" id="per-rank-1-new"><figcaption>new: per-rank view of ranks 0, 1, 2</figcaption>`; !strings.Contains(multi, want) {
		t.Errorf("multi-rank page lacks %s", want)
	}
	if strings.Contains(multi, `id="per-rank-1-old"`) {
		t.Error("a per-rank view for the side without ranks")
	}
	if single := render(0); strings.Contains(single, "per-rank") || strings.Contains(single, "rank 0") {
		t.Error("a single-rank page mentions a per-rank view")
	}
}

// The HTML page carries each benchmark's spike line, as text and Markdown do.
func TestHTMLHasTheSpikeLine(t *testing.T) {
	d := fixture()
	d.Steps = map[string][2]*results.Steps{
		"GCJitter/case=demo/variant=default": {syntheticSteps(2, 100, 1), syntheticSteps(2, 100, 1.1)},
	}
	var b bytes.Buffer
	if err := HTML(&b, d); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, bench := range benchOrder(d) {
		line := spikeText(d.Comparison, bench)
		if line == "" {
			continue
		}
		n++
		if want := `<p class="spikes">` + template.HTMLEscapeString(line) + `</p>`; !strings.Contains(b.String(), want) {
			t.Errorf("%s: no %q in the page", bench, want)
		}
	}
	if n == 0 {
		t.Fatal("the fixture has no spike line to look for")
	}
}

// One results directory, nothing compared: every format shows its runs
// (the variants' medians), not an empty comparison.
func TestRunsOnlyReport(t *testing.T) {
	sum := func(p50 float64) *stats.RunSummary {
		return &stats.RunSummary{Steps: 100, P50: p50, P90: 1.2 * p50, P99: 2 * p50, Max: 3 * p50, Spikes: 2, SpikesWithGC: 1, Collections: [3]int{50, 5, 1}}
	}
	m := &results.Manifest{Cases: []results.Case{{Name: "demo", Steps: 100, Runs: 2, Spike: stats.SpikeRule{Factor: 1.5},
		Variants: []results.Variant{{Name: "default", Policy: "default"}, {Name: "disabled", Policy: "disabled"}}}},
		Runs: []*results.Run{
			{ID: "demo/default/run-01", Case: "demo", Variant: "default", Status: results.StatusOK, Steps: 100, Summary: sum(40e6)},
			{ID: "demo/default/run-02", Case: "demo", Variant: "default", Status: results.StatusOK, Steps: 100, Summary: sum(42e6)},
			{ID: "demo/disabled/run-01", Case: "demo", Variant: "disabled", Status: results.StatusOK, Steps: 100, Summary: sum(30e6)},
			{ID: "demo/disabled/run-02", Case: "demo", Variant: "disabled", Status: results.StatusFailed, Reason: "worker killed by SIGKILL after 7 steps"},
		}}
	d := &Doc{Kind: "run", Title: "runs", Generated: time.Unix(0, 0), Manifest: m}
	render := func(format string) string {
		var b bytes.Buffer
		if err := Render(&b, format, d); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	text := render("text")
	for _, want := range []string{"default      2/2  41.000 ms", "disabled      1/2  30.000 ms", "50%"} {
		if !strings.Contains(text, want) {
			t.Errorf("text: no %q in\n%s", want, text)
		}
	}
	md := render("markdown")
	for _, want := range []string{"**3 of 4 runs completed**", "| `default` | 2/2 | 41.000 ms |", "run `demo/disabled/run-02` failed"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown: no %q in\n%s", want, md)
		}
	}
	var js struct {
		Variants []VariantSummary `json:"variants"`
	}
	if err := json.Unmarshal([]byte(render("json")), &js); err != nil {
		t.Fatal(err)
	}
	if len(js.Variants) != 2 || js.Variants[0].P50 != 0.041 || js.Variants[1].RunsOK != 1 || js.Variants[1].Runs != 2 {
		t.Errorf("json variants: %+v", js.Variants)
	}
	junit := render("junit")
	if !strings.Contains(junit, `tests="4" failures="0" errors="1"`) {
		t.Errorf("junit: want 3 passing runs and 1 error:\n%s", junit)
	}
}

// TestJUnitScheduleNotComparedIsNoPass: a variant whose schedule a
// -filter gate did not compare is a skipped test that says why, not a
// passing "GC schedule unchanged".
func TestJUnitScheduleNotComparedIsNoPass(t *testing.T) {
	d := fixture()
	d.Schedules[0].Schedule = nil
	d.Schedules[0].ScheduleCompared = []string{"default"}
	d.Schedules[0].Notes = []string{"demo/manual:50: not run (-filter left it out): its schedule was not compared"}
	var b bytes.Buffer
	if err := JUnit(&b, d); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	i := strings.Index(out, `classname="gcjitter.demo.manual:50"`)
	for i >= 0 && !strings.Contains(out[max(0, i-40):i], `name="gc-schedule"`) {
		j := strings.Index(out[i+1:], `classname="gcjitter.demo.manual:50"`)
		if j < 0 {
			i = -1
			break
		}
		i += 1 + j
	}
	if i < 0 {
		t.Fatalf("no gc-schedule testcase for manual:50:\n%s", out)
	}
	end := strings.Index(out[i:], "</testcase>")
	tc := out[i : i+end]
	if !strings.Contains(tc, `<skipped message="GC schedule not compared: not run (-filter left it out)`) || strings.Contains(tc, "GC schedule unchanged") {
		t.Errorf("manual:50's schedule, not compared, reads:\n%s", tc)
	}
}
