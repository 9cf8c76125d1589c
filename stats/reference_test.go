package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/perf/benchmath"
)

// TestAgreesWithBenchmath: for the same per-run values, the center, its
// confidence interval and the U test's p-value are benchstat's (benchmath
// at 95%), to 3 significant digits.
func TestAgreesWithBenchmath(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 50 {
		n1, n2 := 3+rng.IntN(15), 3+rng.IntN(15)
		old, new := make([]float64, n1), make([]float64, n2)
		for i := range old {
			old[i] = 40e6 * math.Exp(0.05*rng.NormFloat64())
		}
		shift := 0.03 * float64(rng.IntN(3))
		for i := range new {
			new[i] = 40e6 * (1 + shift) * math.Exp(0.05*rng.NormFloat64())
		}
		row := Compare([]Pair{{Bench: "b", Metric: "p50", Old: old, New: new}}, Options{})[0]
		s1 := benchmath.NewSample(old, &benchmath.DefaultThresholds)
		s2 := benchmath.NewSample(new, &benchmath.DefaultThresholds)
		for _, c := range []struct {
			name string
			got  Estimate
			want benchmath.Summary
		}{{"old", row.OldEst, benchmath.AssumeNothing.Summary(s1, 0.95)}, {"new", row.NewEst, benchmath.AssumeNothing.Summary(s2, 0.95)}} {
			if !sig3(c.got.Center, c.want.Center) || !sig3(c.got.Lo, c.want.Lo) || !sig3(c.got.Hi, c.want.Hi) {
				t.Errorf("trial %d %s: median %v [%v, %v], benchmath %v [%v, %v]", trial, c.name, c.got.Center, c.got.Lo, c.got.Hi, c.want.Center, c.want.Lo, c.want.Hi)
			}
		}
		if want := benchmath.AssumeNothing.Compare(s1, s2).P; !sig3(row.P, want) {
			t.Errorf("trial %d: p %v, benchmath %v", trial, row.P, want)
		}
	}
}

func sig3(a, b float64) bool {
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 0.0005*math.Max(math.Abs(a), math.Abs(b))
}

// TestAgreesWithScipy checks against an independent implementation:
// scipy's Mann-Whitney U test p-values, and the shift interval by inverting
// scipy's exact test (a shift just inside the interval is not rejected at
// 5%, one just outside is).
func TestAgreesWithScipy(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import scipy.stats").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI needs scipy for /usr/bin/python3 (Debian: python3-scipy; .ci/run installs it)")
		}
		t.Skip("no scipy for /usr/bin/python3 (Debian: python3-scipy)")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	type tcase struct {
		Old, New       []float64
		P, Lo, Hi, Eps float64
	}
	var cases []tcase
	for range 30 {
		n1, n2 := 5+rng.IntN(12), 5+rng.IntN(12)
		c := tcase{Old: make([]float64, n1), New: make([]float64, n2)}
		for i := range c.Old {
			c.Old[i] = 100 + 10*rng.NormFloat64()
		}
		for i := range c.New {
			c.New[i] = 100 + 5*float64(rng.IntN(3)) + 10*rng.NormFloat64()
		}
		c.P = Compare([]Pair{{Bench: "b", Metric: "m", Old: c.Old, New: c.New}}, Options{})[0].P
		_, c.Lo, c.Hi = rawShiftCI(c.Old, c.New, 0.05, false)
		c.Eps = 1e-7
		cases = append(cases, c)
	}
	in, _ := json.Marshal(cases)
	script := `
import json, sys
from scipy.stats import mannwhitneyu
out = []
for c in json.load(sys.stdin):
    x, y = c["Old"], c["New"]
    method = "exact"
    p = mannwhitneyu(x, y, alternative="two-sided", method=method).pvalue
    def pshift(d):
        return mannwhitneyu(x, [v - d for v in y], alternative="two-sided", method="exact").pvalue
    lo, hi, e = c["Lo"], c["Hi"], c["Eps"] * max(1, abs(c["Lo"]), abs(c["Hi"]))
    out.append([method, p, pshift(lo + e), pshift(lo - e), pshift(hi - e), pshift(hi + e)])
json.dump(out, sys.stdout)
`
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = strings.NewReader(string(in))
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("scipy: %v", err)
	}
	var got [][]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for i, g := range got {
		method, p := g[0].(string), g[1].(float64)
		// benchmath (moremath) uses the exact U distribution for samples
		// this small without ties; so is scipy asked to.
		if !sig3(p, cases[i].P) {
			t.Errorf("case %d (%s): p %v, scipy %v", i, method, cases[i].P, p)
		}
		inLo, outLo, inHi, outHi := g[2].(float64), g[3].(float64), g[4].(float64), g[5].(float64)
		if !(inLo >= 0.05 && outLo < 0.05 && inHi >= 0.05 && outHi < 0.05) {
			t.Errorf("case %d: interval [%v, %v] is not the inversion of the exact U test: p inside %v %v, outside %v %v",
				i, cases[i].Lo, cases[i].Hi, inLo, inHi, outLo, outHi)
		}
	}
}

// The selection path for large samples gives the same interval as listing
// every difference.
func TestKthDiffMatchesSorting(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for range 20 {
		n1, n2 := 1+rng.IntN(40), 1+rng.IntN(40)
		xs, ys := make([]float64, n1), make([]float64, n2)
		for i := range xs {
			xs[i] = float64(rng.IntN(20)) // ties included
		}
		for i := range ys {
			ys[i] = 3 + rng.NormFloat64()*5
		}
		xs, ys = sortedCopy(xs), sortedCopy(ys)
		var diffs []float64
		for _, y := range ys {
			for _, x := range xs {
				diffs = append(diffs, y-x)
			}
		}
		diffs = sortedCopy(diffs)
		for _, k := range []int{1, len(diffs) / 3, (len(diffs) + 1) / 2, len(diffs)} {
			if k < 1 {
				continue
			}
			if got, want := kthDiff(xs, ys, k), diffs[k-1]; math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Fatalf("k=%d of %d: %v, want %v", k, len(diffs), got, want)
			}
		}
	}
}
