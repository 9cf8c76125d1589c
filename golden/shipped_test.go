package golden

import (
	"testing"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/results"
)

// TestShippedBaselinesMatchShippedWorker: every committed baseline was made
// by the worker that ships, on a host neither disturbed nor busy. A change to the worker (bench/gcjitter_worker) without remade
// baselines cannot land: against a baseline of another worker every
// schedule change reads as "environment changed" and gates nothing.
// (That their schedules match what this worker produces at their size is
// TestQuickSuiteChecks, which runs it.) Remake with:
//
//	scripts/remake-golden.sh
func TestShippedBaselinesMatchShippedWorker(t *testing.T) {
	classes := Classes(".")
	if len(classes) == 0 {
		t.Fatal("no committed baselines found")
	}
	for _, class := range classes {
		gs := ReadClass(".", class)
		for _, g := range gs {
			if g.Env.Worker != bench.WorkerName() {
				t.Errorf("%s: made by %s, but %s ships: remake the baselines on a quiet host (scripts/remake-golden.sh; host class %s)",
					Path(".", class, g.Case), g.Env.Worker, bench.WorkerName(), class)
			}
		}
		for _, c := range Contaminated(Pool(".", class)) {
			t.Errorf("%s is contaminated (made on a disturbed host): %s", Path(".", class, c.Case), c)
		}
		// Whether a host runs at a baseline's speed is measured, not read
		// off a model string: every baseline carries its session's
		// calibration (a steady one) and the host facts beside it, and its
		// single-rank variants their heap census.
		for _, g := range gs {
			p, path := g.Provenance, Path(".", class, g.Case)
			switch {
			case !p.Calibration.Known():
				t.Errorf("%s has no calibration of its host's speed: remake it", path)
			case p.Calibration.Moved():
				t.Errorf("%s was made while its host's speed moved %.0f%%: remake it on a quiet host", path, 100*p.Calibration.Spread())
			}
			if p.FlagsHash == "" || p.Caches == "" {
				t.Errorf("%s lacks the host facts beside the model string (CPU flags hash, caches): remake it", path)
			}
			c, err := cases.Load(g.Case)
			if err != nil {
				t.Errorf("%s: %v", path, err)
				continue
			}
			for _, v := range g.Variants {
				if v.Census == nil && c.Ranks <= 1 && c.Launcher == "" {
					t.Errorf("%s: variant %s has no heap census: remake it", path, v.Name)
				}
			}
		}
		// A load over the whole session slows every run alike, which the
		// test above cannot see; golden update records it.
		for _, g := range gs {
			if p := g.Provenance; p.OtherCPUs == nil {
				t.Errorf("%s does not say how busy its host was (made by a gcjitter before runs recorded other load, or from such runs): remake it on a quiet host", Path(".", class, g.Case))
			} else if p.Busy() {
				t.Errorf("%s was made beside other load (up to %.2f CPUs, over %.2f; golden update -allow-busy): remake it on a quiet host", Path(".", class, g.Case), *p.OtherCPUs, results.BusyLimit(p.CPUs))
			}
		}
	}
}
