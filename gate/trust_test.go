package gate

import (
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/results"
)

// TestResolveTimingByCPUModel: -timing auto gates timings only against
// baselines made on this host's CPU model; against another's they are
// reported and the note says why and how to gate anyway. An explicit
// -timing is kept.
func TestResolveTimingByCPUModel(t *testing.T) {
	dir := baseline(t, "test-cpu", func(g *golden.Golden) { g.Provenance.CPUModel = "Intel(R) Xeon(R) Processor" })
	for _, tc := range []struct {
		flag, host, want string
		noted            bool
	}{
		{TimingAuto, "Intel(R) Xeon(R) Processor", TimingGate, false},
		{TimingAuto, "AMD EPYC", TimingReport, true},
		{TimingGate, "AMD EPYC", TimingGate, false},
		{TimingReport, "Intel(R) Xeon(R) Processor", TimingReport, false},
		{TimingAuto, "", TimingGate, false}, // unknown here: as before
	} {
		p := plan(t, dir, fixtureCase(t))
		p.Host = results.Host{CPUModel: tc.host}
		got, note := p.ResolveTiming(tc.flag)
		if got != tc.want || (note != "") != tc.noted {
			t.Errorf("-timing %s on %q: %s (note %q), want %s", tc.flag, tc.host, got, note, tc.want)
		}
		if tc.noted && !(strings.Contains(note, "Intel(R) Xeon(R) Processor") && strings.Contains(note, "AMD EPYC") && strings.Contains(note, "-timing gate")) {
			t.Errorf("the note names neither CPU or not how to gate anyway: %s", note)
		}
	}
}

// TestContaminatedBaselineNamed: a baseline two of whose runs ran at twice
// the others' p50 (the shipped baselines' fault) is named as contaminated,
// with its outlying runs and the golden update that remakes it, and the
// power refusal gives that advice instead of asking for more runs.
func TestContaminatedBaselineNamed(t *testing.T) {
	dir := baseline(t, "test-cpu", func(g *golden.Golden) {
		v := &g.Variants[0]
		base := v.Runs[0]
		v.Runs = nil
		for i := range 5 {
			r := map[string]float64{}
			for k, x := range base {
				r[k] = x * (1 + 0.01*float64(i))
			}
			// Runs of 40 steps of 30 ms: long enough to be held to the
			// 1.6x floor (stats.OutlierFloor).
			r["mean"] = 3e7 * (1 + 0.01*float64(i))
			if i == 2 || i == 3 {
				r["p50"] *= 2
				r["p99"] *= 2
			}
			v.Runs = append(v.Runs, r)
		}
		g.Size.Runs = 5
	})
	p := plan(t, dir, fixtureCase(t))
	notes := p.Contamination()
	if len(notes) != 1 {
		t.Fatalf("contamination notes %q, want one", notes)
	}
	for _, want := range []string{"is contaminated", "fixture/default: runs 3, 4 of 5 have p50 1.9", "x, 1.9", "gcjitter golden update -golden " + dir + " -host-class test-cpu -runs 5 -steps 40 -warmup 2 fixture"} {
		if !strings.Contains(notes[0], want) {
			t.Errorf("note lacks %q:\n%s", want, notes[0])
		}
	}
	if pw := p.PlanPower(); pw.Refused != nil && strings.Contains(pw.Refused.Error(), "-runs more than") {
		t.Errorf("refused with advice to run more: %v", pw.Refused)
	}
	clean := plan(t, baseline(t, "test-cpu", nil), fixtureCase(t))
	if notes := clean.Contamination(); len(notes) != 0 {
		t.Errorf("the fixture's own baseline called contaminated: %q", notes)
	}
}

// TestWarnsOfBusyHost: a gate whose runs were made beside other load, or
// whose baseline was (golden update -allow-busy), says so even when it
// passes; a quiet one says nothing of load.
func TestWarnsOfBusyHost(t *testing.T) {
	other := func(v float64) *float64 { return &v }
	m := &results.Manifest{Host: results.Host{CPUs: 2}, Runs: []*results.Run{{OtherCPUs: other(1.2)}, {OtherCPUs: other(0.1)}, {}}}
	g := &golden.Golden{Provenance: golden.Provenance{CPUs: 2, OtherCPUs: other(0.9)}}
	o := &Outcome{Plan: &Plan{Cases: []*cases.Case{{Name: "c"}}, Goldens: map[string]*golden.Golden{"c": g}}, Manifest: m}
	got := strings.Join(o.Warnings(), "\n")
	for _, want := range []string{"the host was busy during 1 of 3 runs: other processes kept up to 1.20 CPUs busy (over 0.50 of 2)", "the baseline of c was made beside other load (up to 0.90 CPUs"} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
	m.Runs[0].OtherCPUs, g.Provenance.OtherCPUs = other(0.4), other(0.3)
	if w := o.Warnings(); len(w) != 0 {
		t.Errorf("a quiet gate warns: %q", w)
	}
}
