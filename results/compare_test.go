package results

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/stats"
)

// sides makes two sides of one benchmark with the given metrics' per-run
// values (lognormal, 2% spread) and steps per run.
func sides(rng *rand.Rand, bench string, runs, oldSteps, newSteps int, units map[string][2]float64) (*Data, *Data) {
	old, new := NewData("old"), NewData("new")
	for range runs {
		old.AddIters(bench, oldSteps)
		new.AddIters(bench, newSteps)
		for u, c := range units {
			old.AddValue(bench, u, c[0]*math.Exp(0.02*rng.NormFloat64()))
			new.AddValue(bench, u, c[1]*math.Exp(0.02*rng.NormFloat64()))
		}
	}
	return old, new
}

func row(c *Comparison, bench, metric string) *stats.Row {
	for _, r := range c.Rows {
		if r.Bench == bench && r.Metric == metric {
			return r
		}
	}
	return nil
}

func hasNote(c *Comparison, sub string) bool {
	for _, n := range c.Notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

// Alpha is explicit: the option, else what every case agrees on, else the
// smallest with a note; not the new side's last case.
func TestCompareAlpha(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const b = "GCJitter/case=a/variant=default"
	old, new := sides(rng, b, 3, 500, 500, map[string][2]float64{"p50-ns/step": {40e6, 40e6}})
	old.Alpha, new.Alpha = 0.01, 0.05
	if c := Compare(old, new, CompareOptions{}); c.Alpha != 0.01 || !hasNote(c, "different alphas") {
		t.Errorf("alphas 0.01 and 0.05: alpha %v, notes %q", c.Alpha, c.Notes)
	}
	if c := Compare(old, new, CompareOptions{Alpha: 0.1}); c.Alpha != 0.1 || hasNote(c, "alphas") {
		t.Errorf("-alpha 0.1: alpha %v, notes %q", c.Alpha, c.Notes)
	}
	old.Alpha = 0.05
	if c := Compare(old, new, CompareOptions{}); c.Alpha != 0.05 || hasNote(c, "alphas") {
		t.Errorf("agreeing: alpha %v, notes %q", c.Alpha, c.Notes)
	}
}

// A results directory's manifest says each case's alpha and primary
// metrics; cases that disagree on alpha are named.
func TestCompareReadsCasesFromManifests(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	m := &Manifest{Schema: ManifestSchema, Cases: []Case{
		{Name: "a", Alpha: 0.05, Primary: []string{"p50"}},
		{Name: "z", Alpha: 0.01},
	}}
	if err := WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	const a, z = "GCJitter/case=a/variant=default", "GCJitter/case=z/variant=default"
	units := map[string][2]float64{"p50-ns/step": {40e6, 40e6}, "p99-ns/step": {50e6, 50e6}}
	old, new := sides(rng, a, 3, 500, 500, units)
	o2, n2 := sides(rng, z, 3, 500, 500, units)
	old.Merge(o2)
	new.Merge(n2)
	new.Path = dir
	new.Alpha = 0.01 // the last case's, as Load sets it
	c := Compare(old, new, CompareOptions{})
	if c.Alpha != 0.01 || !hasNote(c, "0.01 (z), 0.05 (a)") {
		t.Errorf("alpha %v, notes %q", c.Alpha, c.Notes)
	}
	if r := row(c, a, "p99"); r.Verdict != stats.Descriptive {
		t.Errorf("case a tests only p50; its p99: %s", r.Verdict)
	}
	if r := row(c, z, "p99"); !r.Tested() {
		t.Errorf("case z tests the default primary metrics; its p99: %s", r.Verdict)
	}
	if r := row(c, a, "p50"); !r.Tested() || r.FamilySize != 3 {
		t.Errorf("a p50: tested %v in a family of %d, want 3 (a: p50; z: p50, p99)", r.Tested(), r.FamilySize)
	}
}

// CompareOptions.Primary and Family: what is tested, and in which
// families.
func TestComparePrimaryAndFamily(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	units := map[string][2]float64{"p50-ns/step": {40e6, 40e6}, "p99-ns/step": {50e6, 50e6}, "max-ns/step": {60e6, 60e6}, "gc-share": {0.1, 0.1}}
	old, new := NewData("old"), NewData("new")
	for _, v := range []string{"x", "y"} {
		o, n := sides(rng, "GCJitter/case=c/variant="+v, 4, 500, 500, units)
		old.Merge(o)
		new.Merge(n)
	}
	c := Compare(old, new, CompareOptions{Primary: map[string][]string{"c": {"p50", "max"}}, Family: FamilyBenchmark})
	for _, r := range c.Rows {
		want := r.Metric == "p50" || r.Metric == "max"
		if r.Tested() != want {
			t.Errorf("%s %s: tested %v", r.Bench, r.Metric, r.Tested())
		}
		if r.Tested() && (r.FamilySize != 2 || r.Family != r.Bench) {
			t.Errorf("%s %s: family %q of %d, want its benchmark's 2", r.Bench, r.Metric, r.Family, r.FamilySize)
		}
	}
	if tests, families := c.Tests(); tests != 4 || families != 2 {
		t.Errorf("Tests: %d in %d families", tests, families)
	}
	c = Compare(old, new, CompareOptions{})
	if tests, families := c.Tests(); tests != 6 || families != 1 || c.Family != FamilyComparison {
		t.Errorf("default: %d tests in %d families (%s), want p50, p99 and gc-share of both in one", tests, families, c.Family)
	}
}

// Sides of different step counts: a note, and the counts per 1000 steps
// are not judged (200 against 210 steps gave gen0-collections improved in
// 50 of 50 tries).
func TestCompareDifferentLengths(t *testing.T) {
	const b = "GCJitter/case=c/variant=default"
	old, new := NewData("old"), NewData("new")
	for range 3 {
		old.AddIters(b, 200)
		new.AddIters(b, 210)
		old.AddValue(b, "gen0-collections/kstep", 1000*67/200.0)
		new.AddValue(b, "gen0-collections/kstep", 1000*70/210.0)
		old.AddValue(b, "p50-ns/step", 40e6)
		new.AddValue(b, "p50-ns/step", 40.1e6)
	}
	c := Compare(old, new, CompareOptions{})
	if r := row(c, b, "gen0-collections"); r.Verdict != stats.Descriptive {
		t.Errorf("gen0-collections at 200 vs 210 steps: %s (%s)", r.Verdict, r.Reason)
	}
	if !hasNote(c, "runs of different lengths (old 200 steps, new 210)") {
		t.Errorf("notes %q", c.Notes)
	}
}

// One line per step (iterations 1, hundreds of lines) is accepted with a
// warning: steps of one process are not independent runs.
func TestComparePerStepInput(t *testing.T) {
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "BenchmarkStep 1 %d ns/op\n", 40000000+i%7)
	}
	old, err := readBenchfmt(strings.NewReader(b.String()), "old.txt")
	if err != nil {
		t.Fatal(err)
	}
	new, _ := readBenchfmt(strings.NewReader(b.String()), "new.txt")
	c := Compare(old, new, CompareOptions{})
	if !hasNote(c, "300 result lines of 1 iteration each") || !hasNote(c, "not independent runs") {
		t.Errorf("per-step input: notes %q", c.Notes)
	}
	runs, _ := readBenchfmt(strings.NewReader("BenchmarkRun 2000 40000000 ns/op\nBenchmarkRun 2000 40100000 ns/op\n"), "runs.txt")
	if c := Compare(runs, runs, CompareOptions{}); hasNote(c, "not independent") {
		t.Errorf("per-run input: notes %q", c.Notes)
	}
}

// The variant verdict: fewer, longer collections are not an improvement.
func TestCompareVariantVerdicts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const b = "GCJitter/case=c/variant=freeze"
	old, new := NewData("old"), NewData("new")
	for range 5 {
		old.AddIters(b, 2000)
		new.AddIters(b, 2000)
		old.AddValue(b, "gen2-collections/kstep", 25)
		new.AddValue(b, "gen2-collections/kstep", 5)
		old.AddValue(b, "gen2-max-pause-ns", 10e6*math.Exp(0.02*rng.NormFloat64()))
		new.AddValue(b, "gen2-max-pause-ns", 30e6*math.Exp(0.02*rng.NormFloat64()))
	}
	c := Compare(old, new, CompareOptions{})
	vs := c.VariantVerdicts()
	if len(vs) != 1 || vs[0].Verdict == stats.Improved || !strings.Contains(vs[0].Reason, stats.FewerLongerNote) {
		t.Errorf("variant verdicts %+v", vs)
	}
}

func TestCaseOf(t *testing.T) {
	for in, want := range map[string]string{BenchName("ascend-gpt", "manual:50"): "ascend-gpt", "BenchmarkFoo/bar": ""} {
		if got := CaseOf(in); got != want {
			t.Errorf("CaseOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every comparison states what its size could see in p50 and p99: the
// worst tested row's detectable change, and a decisive metric reported
// but not tested (too short a run) is named as such, not left out.
func TestSensitivityNamesTheWorstRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	noisy := func(n int, sd float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = 10 * math.Exp(sd*rng.NormFloat64())
		}
		return xs
	}
	pairs := []stats.Pair{
		{Bench: "a", Metric: "p50", Old: noisy(5, 0.01), New: noisy(5, 0.01)},
		{Bench: "b", Metric: "p50", Old: noisy(5, 0.20), New: noisy(5, 0.20)},
		{Bench: "a", Metric: "p99", Old: noisy(5, 0.05), New: noisy(5, 0.05)},
	}
	pairs[2].Descriptive = true // reported, not tested
	c := &Comparison{Rows: stats.Compare(pairs, stats.Options{})}
	sens := c.Sensitivity()
	if len(sens) != 1 || sens[0].Metric != "p50" || sens[0].Worst.Bench != "b" || sens[0].Rows != 2 {
		t.Fatalf("sensitivity %+v, want p50's worst row b of 2", sens)
	}
	if !(sens[0].Detectable > c.Rows[0].Detectable) {
		t.Errorf("worst %v not above the tight row's %v", sens[0].Detectable, c.Rows[0].Detectable)
	}
	text := c.SensitivityText()
	for _, want := range []string{"p50 " + stats.Pct(sens[0].Detectable) + " (the worst of 2 rows: b at 5+5 runs)", "p99 not tested"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q lacks %q", text, want)
		}
	}
}

// p99 of short runs is tested between runs of one length (200 steps, far
// under the 368 of a within-run interval) and its detectable change stated;
// across lengths under 368 it is left out, with a note saying why.
func TestCompareP99AtEqualLengths(t *testing.T) {
	const b = "GCJitter/case=c/variant=default"
	units := map[string][2]float64{"p50-ns/step": {40e6, 40e6}, "p99-ns/step": {80e6, 120e6}}
	old, new := sides(rand.New(rand.NewPCG(7, 8)), b, 5, 200, 200, units)
	c := Compare(old, new, CompareOptions{})
	if r := row(c, b, "p99"); r == nil || !r.Tested() || r.Verdict != stats.Regressed {
		t.Fatalf("p99 at 200 steps a run, +50%%: %v, want regressed", r)
	}
	if text := c.SensitivityText(); !strings.Contains(text, "; p99 +") {
		t.Errorf("sensitivity %q states no detectable p99 change", text)
	}
	old, new = sides(rand.New(rand.NewPCG(7, 8)), b, 5, 200, 300, units)
	c = Compare(old, new, CompareOptions{})
	if r := row(c, b, "p99"); r != nil {
		t.Errorf("p99 at 200 vs 300 steps compared: %s", r.Verdict)
	}
	if !hasNote(c, "p99 left out of 1 benchmark(s): runs of different lengths") {
		t.Errorf("notes %q", c.Notes)
	}
}

// TestCompareAcrossEnvironmentsPricesCounts: compare of two directories
// whose runs recorded different environments (another interpreter) judges
// a changed collection count by its cost, as gate and ab do: one more
// young collection explains, not fails. In one environment the same count
// change fails (exact).
func TestCompareAcrossEnvironmentsPricesCounts(t *testing.T) {
	side := func(gen0 int, python string) *Data {
		d := NewData(python)
		b := BenchName("c", "default")
		for k := range 5 {
			j := 1 + 0.01*float64(k-2)
			r := stats.RunSummary{Steps: 1000, Collections: [3]int{gen0, 100, 5}, PauseNS: [3]float64{50e3 * float64(gen0) * j, 40e6 * j, 200e6 * j},
				MaxPauseNS: [3]float64{60e3 * j, 500e3 * j, 42e6 * j}}
			r.Mean = 10e6*j + (r.PauseNS[0]+r.PauseNS[1]+r.PauseNS[2])/1000
			r.GCShare = (r.PauseNS[0] + r.PauseNS[1] + r.PauseNS[2]) / (r.Mean * 1000)
			r.P50, r.P90, r.P99, r.Max = 10e6*j, 10.5e6*j, 50e6*j, 52e6*j
			r.Typical, r.Yardstick = 10e6*j, 10e6*j
			d.AddRun(b, r)
		}
		d.Env[b] = Env{Python: python, Torch: "1.13.0"}
		return d
	}
	row := func(c *Comparison) *stats.Row {
		for _, r := range c.Rows {
			if r.Metric == "gen0-collections" {
				return r
			}
		}
		t.Fatal("no gen0-collections row")
		return nil
	}
	upgrade := Compare(side(1160, "3.11.2"), side(1161, "3.12.1"), CompareOptions{})
	if r := row(upgrade); r.Verdict == stats.Regressed || !strings.Contains(r.Reason, "explains") {
		t.Errorf("across interpreters: %s: %s; want one more young collection priced (explains)", r.Verdict, r.Reason)
	}
	same := Compare(side(1160, "3.11.2"), side(1161, "3.11.2"), CompareOptions{})
	if r := row(same); r.Verdict != stats.Regressed {
		t.Errorf("one environment: %s: %s; want the exact count to fail", r.Verdict, r.Reason)
	}
	exact := Compare(side(1160, "3.11.2"), side(1161, "3.12.1"), CompareOptions{CountsByCost: func(string) bool { return false }})
	if r := row(exact); r.Verdict != stats.Regressed {
		t.Errorf("across interpreters, counts asked exact: %s: %s", r.Verdict, r.Reason)
	}
}
