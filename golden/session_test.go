package golden

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/stats"
)

// TestCompareBaselinesAsSessions: baselines made on different days are
// compared (gcjitter compare OLD-DIR NEW-DIR) as the sessions they came
// from. A step planted 2x slower on the next day at the same speed on a
// quiet host regresses; the same 2x on a host that ran the calibration at
// another speed, or beside other load, is undecided, not regressed; the
// exact collection counts decide either way. Compared as one session (the
// sessions left out), the 2x at another speed regresses.
func TestCompareBaselinesAsSessions(t *testing.T) {
	day := time.Date(2026, 12, 4, 16, 52, 0, 0, time.UTC)
	write := func(dir string, at time.Time, walkNS, other, slow float64, gen0 int) {
		t.Helper()
		g, err := FromResults(fiveRuns(t, nil), fixtureDir, "fixture", "ci-cpu")
		if err != nil {
			t.Fatal(err)
		}
		g.Provenance.Date, g.Provenance.CPUModel, g.Provenance.CPUs, g.Provenance.OtherCPUs = at.Format(time.RFC3339), "AMD EPYC", 2, &other
		g.Provenance.Calibration = &results.Calibration{}
		for i := range 5 {
			g.Provenance.Calibration.Points = append(g.Provenance.Calibration.Points,
				results.SpeedPoint{At: at.Add(time.Duration(i) * time.Minute), WalkNS: walkNS * (1 + 0.005*float64(i%2)), ComputeNS: 1.4})
		}
		for _, v := range g.Variants {
			v.Schedule.Collections[0] += gen0
			for _, r := range v.Runs {
				for k := range r {
					if m, ok := stats.MetricByName(k); ok && !m.Exact && !m.Memory {
						r[k] *= slow
					}
				}
				r["gen0-collections"] += float64(gen0)
			}
		}
		if _, err := g.Write(dir); err != nil {
			t.Fatal(err)
		}
	}
	compare := func(newWalk, newOther float64, gen0 int, sessions bool) *results.Comparison {
		t.Helper()
		root := t.TempDir()
		old, new := filepath.Join(root, "old"), filepath.Join(root, "new")
		write(old, day, 2.4, 0.01, 1, 0)
		write(new, day.Add(40*time.Hour), newWalk, newOther, 2, gen0)
		var sides [2]*results.Data
		for i, dir := range []string{old, new} {
			dir = filepath.Join(dir, "ci-cpu")
			if !IsBaselines(dir) {
				t.Fatalf("%s: not read as baselines", dir)
			}
			d, err := SessionData(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !sessions {
				d.Session = nil
			}
			sides[i] = d
		}
		return results.CompareSessions(sides[0], sides[1], results.CompareOptions{})
	}
	timing := func(c *results.Comparison) (regressed, unknown int) {
		for _, r := range c.Rows {
			m, ok := stats.MetricByName(r.Metric)
			if !ok || m.Exact || m.Memory || !r.Tested() {
				continue
			}
			switch r.Verdict {
			case stats.Regressed:
				regressed++
			case stats.Unknown:
				unknown++
			}
		}
		return regressed, unknown
	}
	if c := compare(2.4, 0.01, 0, true); !c.Regressed() || !strings.Contains(strings.Join(c.Notes, "\n"), "the sides are two sessions") {
		t.Errorf("same speed, quiet: a 2x step passed (%v)", c.Notes)
	}
	for _, tc := range []struct {
		name        string
		walk, other float64
		why         string
	}{
		{"at 0.71x the speed (walk 2x slower)", 4.8, 0.01, "timing undecided: speed: the new side's host ran the calibration at 0.71x"},
		{"beside other load", 2.4, 1.9, "timing undecided: host busy: "},
	} {
		c := compare(tc.walk, tc.other, 0, true)
		reg, unk := timing(c)
		if c.Regressed() || reg > 0 || unk == 0 || !strings.Contains(strings.Join(c.Notes, "\n"), tc.why) {
			t.Errorf("%s: regressed %v (%d timing rows), %d unknown; notes %q; want every timing undecided, saying why", tc.name, c.Regressed(), reg, unk, c.Notes)
		}
		if c := compare(tc.walk, tc.other, 1, true); !c.Regressed() {
			t.Errorf("%s: one more young collection passed; the exact counts still decide", tc.name)
		}
	}
	if reg, _ := timing(compare(4.8, 0.01, 0, false)); reg == 0 {
		t.Errorf("as one session at 0.71x: no timing regressed; the check above proves nothing")
	}
}

// TestSessionOfBaselines: a directory's baselines are one session, started
// at the earliest, their calibrations pooled, their load on every run.
func TestSessionOfBaselines(t *testing.T) {
	dir := t.TempDir()
	other := 0.3
	for i, name := range []string{"a", "b"} {
		g, err := FromResults(fiveRuns(t, nil), fixtureDir, "fixture", "ci-cpu")
		if err != nil {
			t.Fatal(err)
		}
		g.Case = name
		g.Provenance.Date = time.Date(2026, 12, 5, 23, 51+i, 0, 0, time.UTC).Format(time.RFC3339)
		g.Provenance.CPUModel, g.Provenance.OtherCPUs = "AMD EPYC", &other
		g.Provenance.Calibration = &results.Calibration{Points: make([]results.SpeedPoint, 3)}
		if _, err := g.Write(dir); err != nil {
			t.Fatal(err)
		}
	}
	d, err := SessionData(filepath.Join(dir, "ci-cpu"))
	if err != nil {
		t.Fatal(err)
	}
	m := d.Session
	if m == nil || m.Started.Minute() != 51 || len(m.Calibration.Points) != 6 || m.Host.CPUModel != "AMD EPYC" || len(m.Runs) != 20 || *m.Runs[0].OtherCPUs != 0.3 || len(d.Benches) != 4 {
		t.Errorf("session %+v, benches %v", m, d.Benches)
	}
}
