package gate

import (
	"regexp"
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
		refusal, err := CanGate(quick, "../golden", class, results.Host{}, 0)
		if err != nil {
			t.Fatalf("%s: %v", class, err)
		}
		if refusal != nil {
			t.Errorf("gcjitter gate -host-class %s would refuse to run: %v", class, refusal)
		}
	}
}

// TestShippedGateTestsP99: the README's gate (`gate -host-class ci-cpu
// smoke ascend-gpt-periodic-gc`, runs of 50 and 270 steps, under the 368 of
// p99's within-run interval) tests p99 and says, before it runs, the p99
// change it detects (#43: "p99 not tested" before). -v prints each shipped
// case's line, the figures docs/compare.md quotes.
func TestShippedGateTestsP99(t *testing.T) {
	detects := func(names ...string) string {
		var cs []*cases.Case
		for _, n := range names {
			c, err := cases.Load(n)
			if err != nil {
				t.Fatal(err)
			}
			cs = append(cs, c)
		}
		p, err := New(cs, Options{Dir: "../golden", Class: "ci-cpu", Warmup: -1})
		if err != nil {
			t.Fatal(err)
		}
		pw := p.PlanPower()
		if pw.Refused != nil {
			t.Errorf("%v: refused %v", names, pw.Refused)
		}
		return pw.Detects
	}
	readme := detects("smoke", "ascend-gpt-periodic-gc")
	if !regexp.MustCompile(`; p99 \+[0-9.]+% \(worst: `).MatchString(readme) {
		t.Errorf("the README's gate: %q states no detectable p99 change", readme)
	}
	t.Logf("smoke ascend-gpt-periodic-gc: %s", readme)
	quick, err := cases.Suite("quick")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range quick {
		names = append(names, c.Name)
		t.Logf("%s alone: %s", c.Name, detects(c.Name))
	}
	t.Logf("the quick suite (gate -host-class ci-cpu): %s", detects(names...))
}
