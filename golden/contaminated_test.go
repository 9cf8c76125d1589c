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
	err := Update(&out, dir, "test-cpu", fiveRuns(t, map[int]bool{4: true, 5: true}), fixtureDir, []string{"fixture"})
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
	if err := Update(&out, dir, "test-cpu", fiveRuns(t, nil), fixtureDir, []string{"fixture"}); err != nil {
		t.Fatalf("undisturbed runs: %v", err)
	}
	if _, err := os.Stat(Path(dir, "test-cpu", "fixture")); err != nil {
		t.Errorf("undisturbed runs not written: %v", err)
	}
}
