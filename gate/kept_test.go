package gate

import (
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// TestKeptHasTheVariantsThatRan: gate -from -check of a -filter run judges
// the expectations as the run did: one on a variant left out is skipped,
// not failed for want of runs.
func TestKeptHasTheVariantsThatRan(t *testing.T) {
	text := `name: two
workload: {model: none, work: 100}
steps: 10
runs: 1
variants:
  - policy: default
  - policy: disabled
expect:
  - {variant: default, metric: gen2-collections, min: 0}
  - {variant: disabled, metric: gen2-collections, max: 0}
`
	dir := t.TempDir()
	sum := stats.RunSummary{Steps: 10}
	m := &results.Manifest{
		Schema: results.ManifestSchema,
		Cases: []results.Case{{Name: "two", Source: "two.yaml", Text: text, Steps: 10, Runs: 1,
			Variants: []results.Variant{{Name: "default", Policy: "default"}}}},
		Runs: []*results.Run{{Case: "two", Variant: "default", Status: results.StatusOK, Summary: &sum}},
	}
	if err := results.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	kept, cs, err := Kept(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || len(cs[0].Variants) != 1 || cs[0].Variants[0].Name != "default" {
		t.Fatalf("kept cases: %+v, want two with its default variant alone", cs)
	}
	var b strings.Builder
	if !CheckExpectations(&b, cs, kept) {
		t.Errorf("an expectation on the variant -filter left out failed:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "skipped (variant disabled was not run: -filter left it out)") {
		t.Errorf("the left-out variant's expectation is not said skipped:\n%s", b.String())
	}
}
