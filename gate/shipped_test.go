package gate

import (
	"testing"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/results"
)

// TestShippedBaselinesCanGate: the README's `gcjitter gate -host-class
// ci-cpu` (the quick suite at the shipped baselines' sizes, timings gated)
// must be able to fail against what ships. A baseline whose runs spread too
// wide makes that gate refuse to run ("this gate cannot fail", exit 2) on
// every host, which no other test sees: a review found the README's command
// refused twice, once for a disturbed baseline, once (2026-12-02, both the
// remade and the previous golden/ci-cpu) for gc-policy-matrix's p50 runs
// spread by one round 1.3x slower than the rest.
func TestShippedBaselinesCanGate(t *testing.T) {
	for _, class := range golden.Classes("../golden") {
		quick, err := cases.Suite("quick")
		if err != nil {
			t.Fatal(err)
		}
		refusal, err := CanGate(quick, "../golden", class, results.Host{})
		if err != nil {
			t.Fatalf("%s: %v", class, err)
		}
		if refusal != nil {
			t.Errorf("gcjitter gate -host-class %s would refuse to run: %v", class, refusal)
		}
	}
}
