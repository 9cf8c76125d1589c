package gate

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// The fixture is a real results directory (testdata/results, made by
// gcjitter run testdata/fixture.yaml with torch): two variants, two runs
// of 40 steps each. The gate's rules are tested on it without torch.
const fixtureDir = "testdata/results"

func fixtureCase(t *testing.T) *cases.Case {
	t.Helper()
	c, err := cases.Load("testdata/fixture.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func fixtureManifest(t *testing.T) *results.Manifest {
	t.Helper()
	m, err := results.ReadManifest(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// baseline writes the fixture's own baseline for class into a fresh
// directory, after edit, and returns the directory.
func baseline(t *testing.T, class string, edit func(*golden.Golden)) string {
	t.Helper()
	g, err := golden.FromResults(fixtureManifest(t), fixtureDir, "fixture", class)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(g)
	}
	dir := t.TempDir()
	if _, err := g.Write(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func plan(t *testing.T, dir string, c *cases.Case) *Plan {
	t.Helper()
	p, err := New([]*cases.Case{c}, Options{Dir: dir, Class: "test-cpu", Warmup: -1})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNewRunsWhatTheBaselineMeasured(t *testing.T) {
	dir := baseline(t, "test-cpu", nil)
	c := fixtureCase(t)
	c.Steps, c.Warmup, c.Runs = 999, 99, 9
	plan(t, dir, c)
	if c.Steps != 40 || c.Warmup != 2 || c.Runs != 2 {
		t.Errorf("size %d+%d x %d, want the baseline's 40+2 x 2", c.Steps, c.Warmup, c.Runs)
	}
	// A size fixed by a flag stays (golden.Check refuses it after the runs
	// if the schedules cannot be compared).
	c = fixtureCase(t)
	c.Runs = 7
	if _, err := New([]*cases.Case{c}, Options{Dir: dir, Class: "test-cpu", Runs: 7, Warmup: -1}); err != nil || c.Runs != 7 {
		t.Errorf("runs %d (err %v), want the flag's 7", c.Runs, err)
	}
}

func TestNewRefusesBeforeAnythingRuns(t *testing.T) {
	dir := baseline(t, "test-cpu", nil)
	other := fixtureCase(t)
	other.Name = "other"
	_, err := New([]*cases.Case{fixtureCase(t), other}, Options{Dir: dir, Class: "test-cpu", Warmup: -1})
	var missing *MissingError
	if !errors.As(err, &missing) || !slices.Equal(missing.Missing, []int{1}) {
		t.Fatalf("got %v, want the second case missing", err)
	}
	if !strings.Contains(err.Error(), "no baseline for case other on host class test-cpu") {
		t.Errorf("message %q does not name the case and class", err)
	}

	// A baseline of another device kind: refused, naming both kinds.
	cuda := baseline(t, "test-cpu", func(g *golden.Golden) { g.Env.Device = "cuda" })
	_, err = New([]*cases.Case{fixtureCase(t)}, Options{Dir: cuda, Class: "test-cpu", Warmup: -1})
	var pe *PlanError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "was made on cuda") || !strings.Contains(err.Error(), "nothing was run") {
		t.Errorf("got %v, want a device-kind refusal", err)
	}

	// Runs of another length than the baseline's: their GC schedules
	// cannot be compared, so the gate is refused before it runs (before,
	// after every run).
	short := fixtureCase(t)
	short.Steps = 7 // as -steps 7 sets it
	_, err = New([]*cases.Case{short}, Options{Dir: dir, Class: "test-cpu", Warmup: -1, Steps: 7})
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "the planned runs 7 after") || !strings.Contains(err.Error(), "nothing was run") {
		t.Errorf("got %v, want a size refusal before any run", err)
	}

	// A baseline moved to another case's name.
	moved := baseline(t, "test-cpu", nil)
	if err := os.Rename(filepath.Join(moved, "test-cpu", "fixture.json"), filepath.Join(moved, "test-cpu", "other.json")); err != nil {
		t.Fatal(err)
	}
	if _, err = New([]*cases.Case{other}, Options{Dir: moved, Class: "test-cpu", Warmup: -1}); !errors.As(err, &pe) || !strings.Contains(err.Error(), "moved or renamed") {
		t.Errorf("got %v, want a moved-baseline refusal", err)
	}
}

func TestDeviceKind(t *testing.T) {
	c := fixtureCase(t)
	c.Workload.Device = "cuda:1"
	if k, _ := DeviceKind(c, results.Host{}); k != "cuda" {
		t.Errorf("explicit cuda:1: kind %q", k)
	}
	c.Workload.Device, c.Workload.Model = "auto", "none"
	if k, _ := DeviceKind(c, results.Host{GPUs: []string{"H200"}}); k != "cpu" {
		t.Errorf("model none: kind %q, want cpu (it runs without torch)", k)
	}
	c.Ranks = 2 // torch.distributed: the device follows torch's build
	if k, _ := DeviceKind(c, results.Host{GPUs: []string{"H200"}}); k != "" {
		t.Errorf("model none, 2 ranks, on a GPU host: kind %q, want unknown before the runs", k)
	}
}

func TestJudgeSameRunsPass(t *testing.T) {
	p := plan(t, baseline(t, "test-cpu", nil), fixtureCase(t))
	o, err := p.Judge(fixtureManifest(t), fixtureDir, Policy{Timing: "gate"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Failed || len(o.Schedules) != 1 || len(o.Schedules[0].Schedule) != 0 {
		t.Errorf("failed %v (%v), schedule diffs %v", o.Failed, o.Why, o.Schedules[0].Schedule)
	}
	if slices.ContainsFunc(o.Comparison.Rows, func(r *stats.Row) bool { return r.Verdict == stats.Regressed }) {
		t.Errorf("runs judged against themselves regressed")
	}
}

func TestJudgeScheduleChangeFailsInTheSameEnvironment(t *testing.T) {
	bumped := func(g *golden.Golden) { g.Variants[0].Schedule.Collections[0]++ }
	p := plan(t, baseline(t, "test-cpu", bumped), fixtureCase(t))
	o, err := p.Judge(fixtureManifest(t), fixtureDir, Policy{Timing: "report"})
	if err != nil {
		t.Fatal(err)
	}
	if !o.Failed || !strings.Contains(strings.Join(o.Why, "; "), "GC schedule of fixture changed") {
		t.Errorf("failed %v, why %v: want a schedule failure", o.Failed, o.Why)
	}

	// The same count change with another torch in the baseline: the
	// upgrade's effect, reported by the schedule layer; the timing layer
	// judges the counts by their cost (the runs' own pauses and steps),
	// never exactly: half the young collections is a saving, not a failure.
	upgraded := func(factor float64) func(g *golden.Golden) {
		return func(g *golden.Golden) {
			bumped(g)
			g.Env.Torch = "2.4.0"
			for _, r := range g.Variants[0].Runs {
				r["gen0-collections"] *= factor
			}
		}
	}
	p = plan(t, baseline(t, "test-cpu", upgraded(2)), fixtureCase(t))
	o, err = p.Judge(fixtureManifest(t), fixtureDir, Policy{Timing: "gate"})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Schedules[0].EnvChanges) == 0 || len(o.Schedules[0].Schedule) == 0 {
		t.Fatalf("env changes %v, schedule diffs %v", o.Schedules[0].EnvChanges, o.Schedules[0].Schedule)
	}
	if o.Failed {
		t.Errorf("an upgrade's schedule change failed the gate: %v", o.Why)
	}
	gen0 := func(o *Outcome) *stats.Row {
		i := slices.IndexFunc(o.Comparison.Rows, func(r *stats.Row) bool { return r.Metric == "gen0-collections" })
		if i < 0 {
			t.Fatalf("no gen0-collections row")
		}
		return o.Comparison.Rows[i]
	}
	if r := gen0(o); r.Cost == nil || r.Verdict == stats.Regressed || r.Cost.Share >= 0 {
		t.Errorf("half the young collections after an upgrade: %s, cost %+v: want a saving, judged by cost", r.Verdict, r.Cost)
	}
	// Twice the young collections after an upgrade: the verdict is the
	// cost's, and a cost over the floor fails the gate.
	p = plan(t, baseline(t, "test-cpu", upgraded(0.5)), fixtureCase(t))
	if o, err = p.Judge(fixtureManifest(t), fixtureDir, Policy{Timing: "gate"}); err != nil {
		t.Fatal(err)
	}
	r := gen0(o)
	if r.Cost == nil || (r.Verdict == stats.Regressed) != (r.Cost.Share > stats.CostFloor) || (r.Verdict == stats.Regressed) != o.Failed {
		t.Errorf("twice the young collections after an upgrade: %s (%s), cost %+v, gate failed %v", r.Verdict, r.Reason, r.Cost, o.Failed)
	}
	t.Logf("twice the young collections: %s: %s", r.Verdict, r.Reason)
}

// metricRow is a comparison whose one row of metric regressed.
func metricRow(metric string) *results.Comparison {
	return &results.Comparison{Rows: []*stats.Row{{Pair: stats.Pair{Metric: metric}, Verdict: stats.Regressed}}}
}

func TestSettleAppliesThePolicy(t *testing.T) {
	rows := func(vs ...stats.Verdict) *results.Comparison {
		c := &results.Comparison{}
		for _, v := range vs {
			c.Rows = append(c.Rows, &stats.Row{Verdict: v})
		}
		return c
	}
	for _, tc := range []struct {
		name   string
		cmp    *results.Comparison
		pol    Policy
		failed bool
	}{
		{"regressed, gated", rows(stats.Same, stats.Regressed), Policy{Timing: "gate"}, true},
		{"regressed, reported only", rows(stats.Regressed), Policy{Timing: "report"}, false},
		{"unknown passes by default", rows(stats.Unknown), Policy{Timing: "gate"}, false},
		{"unknown fails when asked", rows(stats.Unknown), Policy{Timing: "gate", UnknownFails: true}, true},
		{"improved passes", rows(stats.Improved), Policy{Timing: "gate"}, false},
		{"memory growth regressed, timings reported only", func() *results.Comparison {
			c := rows(stats.Regressed, stats.Regressed)
			c.Rows[0].Metric, c.Rows[1].Metric = "p50", "rss-growth"
			return c
		}(), Policy{Timing: "report"}, true},
		// The GC cost and share cancel a uniformly slower host, not a
		// throttled one: on a host of another speed their regression is
		// undecided, a pass unless -unknown fail.
		{"gc-cost regressed, timings reported for speed", metricRow("gc-cost"), Policy{Timing: "report", ForSpeed: true}, false},
		{"gc-share regressed, timings reported for speed, -unknown fail", metricRow("gc-share"), Policy{Timing: "report", ForSpeed: true, UnknownFails: true}, true},
		{"gen2-pause regressed, timings reported for speed", metricRow("gen2-pause"), Policy{Timing: "report", ForSpeed: true}, false},
		{"gc-cost regressed, -timing report", metricRow("gc-cost"), Policy{Timing: "report"}, false},
	} {
		o := &Outcome{Comparison: tc.cmp, Policy: tc.pol}
		o.settle()
		if o.Failed != tc.failed {
			t.Errorf("%s: failed %v, want %v (%v)", tc.name, o.Failed, tc.failed, o.Why)
		}
	}
}

func TestUpdateCommandQuotes(t *testing.T) {
	got := UpdateCommand("g", "ci-cpu", [][2]string{{"python", "/opt/my python/bin/python3"}, {"reduced", "true"}, {"steps", "30"}}, []string{"my case.yaml"})
	want := `gcjitter golden update -golden g -host-class ci-cpu -python '/opt/my python/bin/python3' -reduced -steps 30 'my case.yaml'`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestPlanPowerRefusesAGateThatCannotFail: the runs a gate plans against
// its baseline must be able to detect a doubling of the typical step;
// otherwise it is refused before anything runs, naming the size that can.
func TestPlanPowerRefusesAGateThatCannotFail(t *testing.T) {
	spread := func(lo, hi float64) func(*golden.Golden) {
		return func(g *golden.Golden) {
			for _, v := range g.Variants {
				v.Runs[0]["p50"], v.Runs[1]["p50"] = lo*v.Runs[0]["p50"], hi*v.Runs[0]["p50"]
			}
		}
	}
	// Baseline runs a factor of 2.5 apart: two new runs cannot tell a
	// doubling from noise.
	c := fixtureCase(t)
	p := plan(t, baseline(t, "test-cpu", spread(1, 2.5)), c)
	pw := p.PlanPower()
	var pe *PlanError
	// Against two runs this far apart no number of new runs can (the old
	// wording offered "-runs more than 1000"): the baseline is remade.
	if !errors.As(pw.Refused, &pe) || !strings.Contains(pe.Msg, "p50") ||
		!strings.Contains(pe.Msg, "no number of new runs up to 1000 can against the baseline's 2, nor a baseline of 30 runs") ||
		!strings.Contains(pe.Msg, "remake the baseline where the host is quieter") {
		t.Fatalf("refused %v, want a refusal naming p50 and what can decide", pw.Refused)
	}
	// Runs within 1% of each other: the same plan decides.
	c = fixtureCase(t)
	p = plan(t, baseline(t, "test-cpu", spread(1, 1.01)), c)
	if pw := p.PlanPower(); pw.Refused != nil {
		t.Errorf("a tight baseline was refused: %v", pw.Refused)
	}
}

// TestDetectBeyondTheDrift: a change under what the session drift lets
// any size see is refused with that reason and the way that can see it
// (a same-session A/B), not with advice to remake the baseline, which
// golden update -detect would follow round in a circle; and CanGate with
// the effect, which golden update -detect asks of what it wrote, gives
// the same refusal.
func TestDetectBeyondTheDrift(t *testing.T) {
	tight := func(g *golden.Golden) {
		for _, v := range g.Variants {
			v.Runs[1]["p50"] = 1.01 * v.Runs[0]["p50"]
		}
	}
	dir := baseline(t, "test-cpu", tight)
	if refusal, err := CanGate([]*cases.Case{fixtureCase(t)}, dir, "test-cpu", results.Host{}, 0); err != nil || refusal != nil {
		t.Fatalf("a doubling: %v, %v", refusal, err)
	}
	refusal, err := CanGate([]*cases.Case{fixtureCase(t)}, dir, "test-cpu", results.Host{}, 0.05)
	if err != nil || refusal == nil {
		t.Fatalf("+5%%: %v, %v, want a refusal", refusal, err)
	}
	for _, want := range []string{"this gate cannot see +5.00% (-detect)", "nor any baseline: the session drift of +7.50% a gate against another session allows leaves +",
		"a same-session A/B (gcjitter ab) allows none"} {
		if !strings.Contains(refusal.Error(), want) {
			t.Errorf("the refusal lacks %q: %v", want, refusal)
		}
	}
	if strings.Contains(refusal.Error(), "remake the baseline") {
		t.Errorf("advises a remake no size can make good: %v", refusal)
	}
}

// TestPlanPowerDetect: gate -detect 20% asks the plan to see +20% in p50
// and p99, not a doubling: a baseline that can decide a doubling is
// refused for +20%, the refusal naming the runs that can (and that size
// then plans), or saying no number of new runs can against this baseline.
func TestPlanPowerDetect(t *testing.T) {
	tight := func(g *golden.Golden) {
		for _, v := range g.Variants {
			v.Runs[1]["p50"] = 1.05 * v.Runs[0]["p50"]
		}
	}
	dir := baseline(t, "test-cpu", tight)
	if pw := plan(t, dir, fixtureCase(t)).PlanPower(); pw.Refused != nil {
		t.Fatalf("a doubling: refused %v", pw.Refused)
	}
	p, err := New([]*cases.Case{fixtureCase(t)}, Options{Dir: dir, Class: "test-cpu", Warmup: -1, Detect: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	var pe *PlanError
	if pw := p.PlanPower(); !errors.As(pw.Refused, &pe) || !strings.Contains(pe.Msg, "this gate cannot see +20.0% (-detect)") ||
		!strings.Contains(pe.Msg, "detect a change of +20.0% with ") {
		t.Fatalf("+20%%: refused %v, want a refusal naming +20%%", pw.Refused)
	}
	// A stated change is refused whatever the timing mode: one calibration
	// point on a loaded host must not turn the refusal into a warning.
	if err := p.CheckPower(io.Discard, false); !errors.As(err, &pe) {
		t.Fatalf("-detect 20%% with timings reported only: %v, want the refusal", err)
	}
	m := regexp.MustCompile(`with -runs (\d+) it can`).FindStringSubmatch(pe.Msg)
	if m == nil {
		if !strings.Contains(pe.Msg, "no number of new runs") {
			t.Fatalf("the refusal names neither the runs that can nor that none can: %s", pe.Msg)
		}
		return
	}
	runs, _ := strconv.Atoi(m[1])
	p, err = New([]*cases.Case{fixtureCase(t)}, Options{Dir: dir, Class: "test-cpu", Warmup: -1, Detect: 0.2, Runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	if pw := p.PlanPower(); pw.Refused != nil {
		t.Errorf("at the -runs %d the refusal named: %v", runs, pw.Refused)
	}
}

// A history baseline holds more runs than its newest night's size: the
// refusal is sized and worded on the runs the plan tested.
func TestPlanPowerCountsTheRunsItTested(t *testing.T) {
	dir := baseline(t, "test-cpu", func(g *golden.Golden) {
		g.Size.Runs = 1 // the newest night's; the variants hold 2
		for _, v := range g.Variants {
			v.Runs[0]["p50"], v.Runs[1]["p50"] = v.Runs[0]["p50"], 2.5*v.Runs[0]["p50"]
		}
	})
	pw := plan(t, dir, fixtureCase(t)).PlanPower()
	var pe *PlanError
	if !errors.As(pw.Refused, &pe) || !strings.Contains(pe.Msg, "against the baseline's 2 ") {
		t.Fatalf("refused %v, want it worded on the baseline's 2 runs", pw.Refused)
	}
}

// TestPlanABRefusesAnABThatCannotFail: with no baseline, an A/B assumes a
// 5% run-to-run spread; two runs a side cannot detect a doubling in a
// family of the fixture's size, and the refusal names the runs that can.
func TestPlanABRefusesAnABThatCannotFail(t *testing.T) {
	c := fixtureCase(t)
	c.Runs = 2
	err := PlanAB([]*cases.Case{c}, 0)
	var pe *PlanError
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "pass -runs ") {
		t.Fatalf("got %v, want a refusal naming -runs", err)
	}
	c.Runs = 8
	if err := PlanAB([]*cases.Case{c}, 0); err != nil {
		t.Errorf("8 runs a side refused: %v", err)
	}
}

// The baseline is another session's: the gate allows the timing metrics
// the session drift (the case's gate.drift, else the catalogue's), the
// -drift flag overrides it, and counts never drift.
func TestJudgeAllowsSessionDrift(t *testing.T) {
	c := fixtureCase(t)
	c.Gate.Drift = map[string]cases.Fraction{"p50": 0.02}
	dir := baseline(t, "test-cpu", nil)
	zero := 0.0
	for _, tc := range []struct {
		drift              *float64
		p50, gcShare, rate float64
	}{
		{nil, 0.02, stats.GCShareDrift, 0},
		{&zero, 0, 0, 0},
	} {
		p := plan(t, dir, c)
		p.Drift = tc.drift
		o, err := p.Judge(fixtureManifest(t), fixtureDir, Policy{Timing: "gate"})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]float64{"p50": tc.p50, "gc-share": tc.gcShare, "spike-rate": tc.rate}
		seen := 0
		for _, r := range o.Comparison.Rows {
			if w, ok := want[r.Metric]; ok {
				seen++
				if r.Drift != w {
					t.Errorf("-drift %v: %s %s drift %v, want %v", tc.drift, r.Bench, r.Metric, r.Drift, w)
				}
			}
		}
		if seen < 3 {
			t.Errorf("%d p50, gc-share or spike-rate rows, want one of each per variant", seen)
		}
	}
}

// A baseline made on another CPU: the gate says so before its runs (and
// in its reports), naming the cases; a baseline of this host says nothing.
func TestHostCheckNamesWhatDiffers(t *testing.T) {
	host := results.Host{CPUModel: "Intel(R) Xeon(R) Processor", CPUs: 2, MemTotalKB: 24 << 20}
	same := baseline(t, "test-cpu", func(g *golden.Golden) {
		g.Provenance.CPUModel, g.Provenance.CPUs, g.Provenance.MemKB = host.CPUModel, 2, 24<<20
	})
	p := plan(t, same, fixtureCase(t))
	p.Host = host
	if d := p.HostCheck(); len(d) != 0 {
		t.Errorf("the baseline's own host: %q", d)
	}
	other := baseline(t, "test-cpu", func(g *golden.Golden) {
		g.Provenance.CPUModel, g.Provenance.CPUs, g.Provenance.MemKB = "AMD EPYC 7B13", 2, 24<<20
	})
	p = plan(t, other, fixtureCase(t))
	p.Host = host
	d := p.HostCheck()
	if len(d) != 1 || d[0] != "host differs from the baseline's (fixture): CPU model: AMD EPYC 7B13 when the baseline was made, Intel(R) Xeon(R) Processor here" {
		t.Errorf("got %q", d)
	}
	o, err := p.Judge(fixtureManifest(t), fixtureDir, Policy{Timing: "report"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(o.Comparison.Notes, d[0]) {
		t.Errorf("the reports' notes %q lack the host difference", o.Comparison.Notes)
	}
}

// TestSpeedUndecidedIsSaid: a speed-free metric that regressed at another
// speed is counted unknown and named in the warnings with its change, so
// a user reads what to rerun rather than a silent pass.
func TestSpeedUndecidedIsSaid(t *testing.T) {
	c := metricRow("gc-cost")
	c.Rows[0].Bench = "GCJitter/case=half/variant=manual:10"
	c.Rows[0].Change, c.Rows[0].ChangeLo, c.Rows[0].ChangeHi = 0.21, 0.06, 0.40
	o := &Outcome{Comparison: c, Policy: Policy{Timing: "report", ForSpeed: true}, Plan: &Plan{}, Manifest: &results.Manifest{}}
	o.settle()
	if o.Failed || o.Unknowns != 1 {
		t.Fatalf("failed %v, unknowns %d; want a pass with 1 unknown", o.Failed, o.Unknowns)
	}
	w := strings.Join(o.Warnings(), "\n")
	if !strings.Contains(w, "undecided at another speed: GCJitter/case=half/variant=manual:10 gc-cost +21") || !strings.Contains(w, "gate at the baselines' speed") {
		t.Errorf("warnings do not name the undecided metric and what settles it:\n%s", w)
	}
}

// The fixture's 40-step runs are far under p99's 368 (a within-run
// interval), yet the gate's runs have the baseline's length: p99 is
// planned, its detectable change stated before the runs; a p99 too noisy
// to see the effect at that size warns and does not refuse (such gates ran
// before without p99; p50 decides whether one can fail).
func TestPlanPowerP99AtShortRuns(t *testing.T) {
	tight := func(lo, hi float64) func(*golden.Golden) {
		return func(g *golden.Golden) {
			for _, v := range g.Variants {
				v.Runs[1]["p50"] = 1.01 * v.Runs[0]["p50"]
				v.Runs[0]["p99"], v.Runs[1]["p99"] = lo*v.Runs[0]["p99"], hi*v.Runs[0]["p99"]
			}
		}
	}
	pw := plan(t, baseline(t, "test-cpu", tight(1, 1.01)), fixtureCase(t)).PlanPower()
	if pw.Refused != nil || !regexp.MustCompile(`; p99 \+[0-9.]+% \(worst: \S+ at 2\+2 runs\)`).MatchString(pw.Detects) {
		t.Errorf("tight p99 at 40 steps: refused %v, detects %q, want p99's detectable change", pw.Refused, pw.Detects)
	}
	pw = plan(t, baseline(t, "test-cpu", tight(1, 2.5)), fixtureCase(t)).PlanPower()
	if pw.Refused != nil || !slices.ContainsFunc(pw.Warnings, func(w string) bool { return strings.Contains(w, "p99: 2 new runs") }) {
		t.Errorf("noisy p99 at 40 steps: refused %v, warnings %q, want a warning", pw.Refused, pw.Warnings)
	}
}

// -detect 20% plans p99 at short runs too: a p99 that cannot see the
// stated change refuses, naming p99.
func TestPlanPowerDetectP99AtShortRuns(t *testing.T) {
	dir := baseline(t, "test-cpu", func(g *golden.Golden) {
		for _, v := range g.Variants {
			v.Runs[1]["p50"] = 1.001 * v.Runs[0]["p50"]
			v.Runs[1]["p99"] = 1.5 * v.Runs[0]["p99"]
		}
	})
	noDrift := 0.0 // so that p50 (runs 0.1% apart) sees +20% and p99 alone cannot
	p, err := New([]*cases.Case{fixtureCase(t)}, Options{Dir: dir, Class: "test-cpu", Warmup: -1, Detect: 0.2, Drift: &noDrift, MaxRuns: 10})
	if err != nil {
		t.Fatal(err)
	}
	var pe *PlanError
	if pw := p.PlanPower(); !errors.As(pw.Refused, &pe) || !strings.Contains(pe.Msg, " p99: ") {
		t.Fatalf("+20%% with p99 runs 50%% apart at 40 steps: refused %v, want a refusal naming p99", pw.Refused)
	}
}

// TestJudgeBusyHostLeavesTimingUndecided: a baseline planted 2x faster in
// every timing (p50, p99, pauses, gc-cost) fails a gate of runs made on a
// quiet host; the same runs made beside other load (or while the host's
// speed moved) give no timing verdict: every tested timing row is unknown,
// "undecided: host busy" with the load, the gate passes with a warning
// (fails under -unknown fail), and a schedule change still fails it.
func TestJudgeBusyHostLeavesTimingUndecided(t *testing.T) {
	faster := func(g *golden.Golden) {
		for _, v := range g.Variants {
			for _, r := range v.Runs {
				for k := range r {
					if m, ok := stats.MetricByName(k); ok && !m.Exact && !m.Memory {
						r[k] /= 2
					}
				}
			}
		}
	}
	judge := func(edit func(*golden.Golden), other float64, pol Policy, allow bool) *Outcome {
		t.Helper()
		p := plan(t, baseline(t, "test-cpu", edit), fixtureCase(t))
		p.AllowBusy = allow
		m := fixtureManifest(t)
		m.Host.CPUs = 2
		for _, r := range m.Runs {
			r.OtherCPUs = &other
		}
		o, err := p.Judge(m, fixtureDir, pol)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	regressed := func(o *Outcome) []string {
		var out []string
		for _, r := range o.Comparison.Rows {
			if r.Verdict == stats.Regressed {
				out = append(out, r.Metric)
			}
		}
		return out
	}
	quiet := judge(faster, 0.01, Policy{Timing: "gate"}, false)
	if !quiet.Failed || len(regressed(quiet)) == 0 {
		t.Fatalf("quiet host: failed %v, regressed %v; want the planted 2x to fail the gate", quiet.Failed, regressed(quiet))
	}
	busy := judge(faster, 1.9, Policy{Timing: "gate"}, false)
	if busy.Failed || len(regressed(busy)) > 0 || busy.Unknowns == 0 {
		t.Errorf("busy host: failed %v (%v), regressed %v, unknowns %d; want a pass with the timings unknown", busy.Failed, busy.Why, regressed(busy), busy.Unknowns)
	}
	undecided := 0
	for _, r := range busy.Comparison.Rows {
		m, _ := stats.MetricByName(r.Metric)
		if r.Tested() && !m.Exact && !m.Memory {
			if r.Verdict != stats.Unknown || !strings.HasPrefix(r.Reason, "undecided: host busy: other processes kept up to 1.90 of the host's 2 CPUs busy") {
				t.Errorf("busy host: %s %s %s: %s", r.Bench, r.Metric, r.Verdict, r.Reason)
			}
			undecided++
		}
	}
	if undecided == 0 {
		t.Errorf("busy host: no tested timing row")
	}
	if w := strings.Join(busy.Warnings(), "\n"); !strings.Contains(w, "timing undecided: host busy") {
		t.Errorf("busy host: warnings do not say why the timings are unknown:\n%s", w)
	}
	if o := judge(faster, 1.9, Policy{Timing: "report"}, false); o.Failed || len(regressed(o)) > 0 || o.HostBusy == "" {
		t.Errorf("busy host, timings reported: failed %v, regressed %v; want them reported as undecided", o.Failed, regressed(o))
	}
	if o := judge(faster, 1.9, Policy{Timing: "gate", UnknownFails: true}, false); !o.Failed {
		t.Errorf("busy host, -unknown fail: passed")
	}
	if o := judge(faster, 1.9, Policy{Timing: "gate"}, true); !o.Failed || len(regressed(o)) == 0 {
		t.Errorf("busy host, -allow-busy: failed %v, regressed %v; want the timings judged", o.Failed, regressed(o))
	}
	bumped := func(g *golden.Golden) { faster(g); g.Variants[0].Schedule.Collections[0]++ }
	if o := judge(bumped, 1.9, Policy{Timing: "gate"}, false); !o.Failed || !strings.Contains(strings.Join(o.Why, "; "), "GC schedule of fixture changed") {
		t.Errorf("busy host, schedule changed: failed %v (%v); want the schedule to fail it", o.Failed, o.Why)
	}
}

// TestJudgeBusyHostLeavesACensusPriceUndecided: after an environment
// change the heap census is judged by its price, from pauses timed in the
// new runs; beside other load a collection slows more than a step, so a
// price within results.BusyPriceFactor of the floor is undecided there,
// not a failure. On a quiet host the same census fails the gate.
func TestJudgeBusyHostLeavesACensusPriceUndecided(t *testing.T) {
	census := func(gen1Walk int64) *stats.RunSummary {
		return &stats.RunSummary{Steps: 40, Collections: [3]int{11, 1, 0}, Walked: [3]int64{11 * 700, gen1Walk, 0}}
	}
	upgraded := func(g *golden.Golden) {
		g.Env.Torch = "2.4.0"
		for i := range g.Variants {
			g.Variants[i].Census = &golden.Census{Collections: [3]int{11, 1, 0}, Walked: [3]int64{11 * 700, 1000, 0}}
		}
	}
	judge := func(other float64) *Outcome {
		t.Helper()
		p := plan(t, baseline(t, "test-cpu", upgraded), fixtureCase(t))
		m := fixtureManifest(t)
		m.Host.CPUs = 2
		for _, r := range m.Runs {
			r.OtherCPUs = &other
		}
		// default's gen-1 collections walk 20% more: +0.6-0.7% of its
		// step at the fixture's pauses, over the floor, under twice it.
		m.Census = []*results.Run{
			{Case: "fixture", Variant: "default", Status: results.StatusOK, Summary: census(1200)},
			{Case: "fixture", Variant: "manual", Status: results.StatusOK, Summary: census(1000)},
		}
		o, err := p.Judge(m, fixtureDir, Policy{Timing: "gate"})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	quiet := judge(0.01)
	if d := quiet.Schedules[0].Census; len(d) != 1 || d[0].Cost == nil || d[0].Cost.Share <= stats.CostFloor || d[0].Cost.Share > results.BusyPriceFactor*stats.CostFloor {
		t.Fatalf("census diffs %+v: the test wants one priced between the floor and %g times it", d, results.BusyPriceFactor)
	}
	if !quiet.Failed || !strings.Contains(strings.Join(quiet.Why, "; "), "heap census of fixture grew") {
		t.Errorf("quiet host: failed %v (%v); want the census to fail it", quiet.Failed, quiet.Why)
	}
	busy := judge(1.9)
	if busy.Failed || busy.Unknowns == 0 || !strings.Contains(strings.Join(busy.Comparison.Notes, "\n"), "undecided: host busy: the heap census of fixture grew") {
		t.Errorf("busy host: failed %v (%v), unknowns %d, notes %q; want the census undecided", busy.Failed, busy.Why, busy.Unknowns, busy.Comparison.Notes)
	}
}
