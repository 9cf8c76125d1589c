package gate

import (
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/results"
)

// TestResolveTimingBySpeed: -timing auto gates timings only against
// baselines made on this host's CPU model at this host's measured speed;
// against another model, another speed (the same model string on a host
// twice as slow), or a baseline that never measured its host's speed,
// they are reported and the note says why, with the speed ratio, and how
// to gate anyway. At the same speed the note says so. An explicit -timing
// is kept.
func TestResolveTimingBySpeed(t *testing.T) {
	at := func(cost float64) *results.Calibration {
		return &results.Calibration{Points: []results.SpeedPoint{{WalkNS: cost, ComputeNS: cost}, {WalkNS: cost * 1.01, ComputeNS: cost}}}
	}
	const xeon = "Intel(R) Xeon(R) Processor"
	dir := baseline(t, "test-cpu", func(g *golden.Golden) {
		g.Provenance.CPUModel = xeon
		g.Provenance.Calibration = at(3)
	})
	uncalibrated := baseline(t, "test-cpu", func(g *golden.Golden) { g.Provenance.CPUModel = xeon })
	for _, tc := range []struct {
		name, dir, flag, host string
		speed                 *results.Calibration
		want                  string
		noteHas               []string
		speedOnly             bool // the speed-free metrics still gate
	}{
		{"same model, same speed", dir, TimingAuto, xeon, at(3.1), TimingGate, []string{"timing gated: this host runs the calibration at 0.97x the baseline's speed [0.96x, 0.97x]: the same within ±10%"}, false},
		{"same model, twice as slow", dir, TimingAuto, xeon, at(6), TimingReport, []string{"timing reported only", "at 0.50x the baseline's speed [0.50x, 0.50x]: differs beyond ±10%", "-timing gate", "uniformly slower host cancels in (p99-rel, gc-share, gc-cost) is undecided here"}, true},
		{"same model, 1.5x as fast", dir, TimingAuto, xeon, at(2), TimingReport, []string{"at 1.50x"}, true},
		// Another model walks and computes at other relative speeds: what
		// cancels on one host's quota need not cancel across models.
		{"another model", dir, TimingAuto, "AMD EPYC", at(3), TimingReport, []string{xeon, "AMD EPYC", "-timing gate", "heap census and memory still gate"}, false},
		{"speed not measured here", dir, TimingAuto, xeon, nil, TimingReport, []string{"this host's speed was not measured"}, false},
		{"baseline without calibration", uncalibrated, TimingAuto, xeon, at(3), TimingReport, []string{"made before gcjitter measured host speed"}, false},
		{"-timing gate kept", dir, TimingGate, xeon, at(6), TimingGate, nil, false},
		{"-timing report kept", dir, TimingReport, xeon, at(3), TimingReport, nil, false},
	} {
		p := plan(t, tc.dir, fixtureCase(t))
		p.Host = results.Host{CPUModel: tc.host}
		p.Speed = tc.speed
		got, note := p.ResolveTiming(tc.flag)
		if got != tc.want || (note != "") != (tc.noteHas != nil) {
			t.Errorf("%s: -timing %s: %s (note %q), want %s", tc.name, tc.flag, got, note, tc.want)
		}
		if p.speedOnly != tc.speedOnly {
			t.Errorf("%s: speed-free metrics gate: %v, want %v", tc.name, p.speedOnly, tc.speedOnly)
		}
		for _, s := range tc.noteHas {
			if !strings.Contains(note, s) {
				t.Errorf("%s: the note lacks %q: %s", tc.name, s, note)
			}
		}
	}
	// A calibration too noisy to tell (points 1.5x apart around the
	// baseline's speed): timings reported before the runs, but the
	// session's own calibration may gate them, so the plan is held to
	// what a gated one must meet (MayGate); a host that clearly differs is
	// not.
	noisy := &results.Calibration{Points: []results.SpeedPoint{{WalkNS: 2.5, ComputeNS: 2.5}, {WalkNS: 3.75, ComputeNS: 3.75}}}
	for _, tc := range []struct {
		speed *results.Calibration
		may   bool
	}{{noisy, true}, {at(6), false}, {at(3.1), false}} {
		p := plan(t, dir, fixtureCase(t))
		p.Host = results.Host{CPUModel: xeon}
		p.Speed = tc.speed
		got, note := p.ResolveTiming(TimingAuto)
		if p.MayGate() != tc.may {
			t.Errorf("speed %s: -timing %s (%s): MayGate %v, want %v", tc.speed, got, note, p.MayGate(), tc.may)
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
	switch pw := p.PlanPower(); {
	case pw.Refused == nil:
		t.Errorf("a contaminated baseline's gate was not refused")
	case strings.Contains(pw.Refused.Error(), "-runs more than") || !strings.Contains(pw.Refused.Error(), "contaminated"):
		t.Errorf("refused without naming the contamination, or with advice to run more: %v", pw.Refused)
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
