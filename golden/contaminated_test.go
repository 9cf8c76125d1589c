package golden

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/results"
)

// fixtureDir is a real results directory (gcjitter run, with torch): two
// variants, two runs of 40 steps each.
const fixtureDir = "../gate/testdata/results"

// fiveRuns is the fixture's manifest with five runs of each variant (the
// real runs repeated, their p50 the first run's spread by 1% a run), the runs whose
// number is in slow at twice the p50, as if a CPU burner had started.
func fiveRuns(t *testing.T, slow map[int]bool) *results.Manifest {
	t.Helper()
	m, err := results.ReadManifest(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	var runs []*results.Run
	for _, v := range []string{"default", "manual"} {
		var real []*results.Run
		for _, r := range m.Runs {
			if r.Variant == v {
				real = append(real, r)
			}
		}
		for i := range 5 {
			r := *real[i%len(real)]
			base := real[0].Summary.P50
			s := *r.Summary
			s.P50 = base * (1 + 0.01*float64(i))
			if slow[i+1] {
				s.P50 *= 2
			}
			r.Summary, r.ID = &s, fmt.Sprintf("fixture/%s/run-%02d", v, i+1)
			runs = append(runs, &r)
		}
	}
	m.Runs = runs
	for i := range m.Cases {
		m.Cases[i].Runs = 5
	}
	return m
}

// TestUpdateRefusesDisturbedRuns: golden update writes no baseline from
// runs that disagree beyond the host's noise: it names them (by run ID,
// with how far each stands from the median) and leaves the baselines
// directory as it was; undisturbed runs are written.
func TestUpdateRefusesDisturbedRuns(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	err := Update(&out, dir, "test-cpu", fiveRuns(t, map[int]bool{4: true, 5: true}), fixtureDir, []string{"fixture"}, UpdateOptions{})
	var refused *ContaminatedError
	if !errors.As(err, &refused) {
		t.Fatalf("disturbed runs: %v, want a ContaminatedError", err)
	}
	for _, want := range []string{"no baseline was written", "fixture/default: runs fixture/default/run-04, fixture/default/run-05 of 5 have p50 2.0", "fixture/manual: runs fixture/manual/run-04, fixture/manual/run-05 of 5", "the runs are kept in " + fixtureDir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal lacks %q:\n%v", want, err)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*", "*")); len(files) > 0 {
		t.Errorf("written despite the refusal: %v", files)
	}
	if err := Update(&out, dir, "test-cpu", fiveRuns(t, nil), fixtureDir, []string{"fixture"}, UpdateOptions{}); err != nil {
		t.Fatalf("undisturbed runs: %v", err)
	}
	if _, err := os.Stat(Path(dir, "test-cpu", "fixture")); err != nil {
		t.Errorf("undisturbed runs not written: %v", err)
	}
}

// TestUpdateRefusesBusyRuns: runs that agree with each other (a load that
// spanned the whole session) are still refused when other processes kept
// more than BusyLimit of the host's CPUs busy while they ran: the refusal
// names each such run and -allow-busy; runs at or under the limit, or that
// do not record it, are not judged; AllowBusy writes the baseline with the
// load in its provenance and golden show's host facts.
func TestUpdateRefusesBusyRuns(t *testing.T) {
	if got := results.BusyLimit(2); got != 0.5 {
		t.Errorf("results.BusyLimit(2) = %v, want 0.5 (at least half a CPU)", got)
	}
	if got := results.BusyLimit(64); got != 16 {
		t.Errorf("results.BusyLimit(64) = %v, want 16 (a quarter of the CPUs)", got)
	}
	load := func(m *results.Manifest, cpus int, other ...float64) *results.Manifest {
		m.Host.CPUs = cpus
		for i, r := range m.Runs {
			if i < len(other) && other[i] >= 0 {
				r.OtherCPUs = &other[i]
			}
		}
		return m
	}
	dir := t.TempDir()
	var out bytes.Buffer
	// Ten runs: the first busy, the second just under the limit, the third
	// unrecorded, the rest quiet.
	m := load(fiveRuns(t, nil), 2, 1.3, 0.5, -1, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05)
	err := Update(&out, dir, "test-cpu", m, fixtureDir, []string{"fixture"}, UpdateOptions{})
	var refused *ContaminatedError
	if !errors.As(err, &refused) {
		t.Fatalf("a busy run: %v, want a ContaminatedError", err)
	}
	if len(refused.Busy) != 1 || refused.Busy[0].ID != "fixture/default/run-01" || len(refused.Variants) != 0 {
		t.Errorf("refused %+v and %+v, want only fixture/default/run-01 as busy", refused.Busy, refused.Variants)
	}
	for _, want := range []string{"more than 0.50 of its 2 CPUs", "run fixture/default/run-01: other processes kept 1.30 CPUs busy", "-allow-busy", "no baseline was written"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal lacks %q:\n%v", want, err)
		}
	}
	if got := refused.Cases(); len(got) != 1 || got[0] != "fixture" {
		t.Errorf("cases to run again: %q, want fixture", got)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*", "*")); len(files) > 0 {
		t.Errorf("written despite the refusal: %v", files)
	}
	if err := Update(&out, dir, "test-cpu", m, fixtureDir, []string{"fixture"}, UpdateOptions{AllowBusy: true}); err != nil {
		t.Fatalf("-allow-busy: %v", err)
	}
	g, err := Read(Path(dir, "test-cpu", "fixture"))
	if err != nil {
		t.Fatal(err)
	}
	if p := g.Provenance; p.OtherCPUs == nil || *p.OtherCPUs != 1.3 || !p.Busy() || !strings.Contains(p.HostFacts(), "other load up to 1.30 CPUs") {
		t.Errorf("provenance other load %v, host facts %q: want 1.3, busy", p.OtherCPUs, p.HostFacts())
	}
	quiet := load(fiveRuns(t, nil), 2, 0.2, 0.3, 0.1)
	if err := Update(&out, t.TempDir(), "test-cpu", quiet, fixtureDir, []string{"fixture"}, UpdateOptions{}); err != nil {
		t.Errorf("quiet runs: %v", err)
	}
}

// TestOnePool: golden update, the gate and the shipped-baselines test
// judge contamination in one pool, the host class's (Pool). A variant
// whose runs swing wide looks clean in a pool of its own spread, yet is
// contaminated against the class's noise; were each reader to pool what
// it holds, the same baseline would be clean when written and
// contaminated at the gate.
func TestOnePool(t *testing.T) {
	make := func(name string, p50s ...float64) *Golden {
		g, err := FromResults(fiveRuns(t, nil), fixtureDir, "fixture", "test-cpu")
		if err != nil {
			t.Fatal(err)
		}
		g.Case = name
		for _, v := range g.Variants {
			for i, r := range v.Runs {
				if p50s != nil {
					r["p50"] = p50s[i] * 1e6
					r["mean"], r["max"] = r["p50"], r["p50"]
				}
			}
		}
		return g
	}
	dir := t.TempDir()
	quiet := make("quiet")
	if _, err := quiet.Write(dir); err != nil {
		t.Fatal(err)
	}
	// One run at 1.64x the median, the others within 14%: alone, its own
	// spread (MAD) hides it.
	noisy := make("noisy", 1000, 1050, 1100, 1250, 1800)
	if got := Contaminated([]*Golden{noisy}); len(got) != 0 {
		t.Fatalf("pooled alone the wide variant should pass (the old gate's pool): %v", got)
	}
	// Fresh (golden update's view: not yet written) and written (the
	// gate's and the shipped test's view): one pool, one decision.
	fresh := Contaminated(Pool(dir, "test-cpu", noisy), "noisy")
	if _, err := noisy.Write(dir); err != nil {
		t.Fatal(err)
	}
	written := Contaminated(Pool(dir, "test-cpu"), "noisy")
	if len(fresh) == 0 || len(written) != len(fresh) || fresh[0].String() != written[0].String() {
		t.Fatalf("fresh %v, written %v: want the same contamination of noisy", fresh, written)
	}
	if !strings.Contains(fresh[0].String(), "run 5 of 5 has p50 1.64x") {
		t.Errorf("contamination %s, want run 5 named", fresh[0])
	}
	if got := Contaminated(Pool(dir, "test-cpu"), "quiet"); len(got) != 0 {
		t.Errorf("the quiet baseline is named: %v", got)
	}
}
