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

// TestAgreesWithBenchmath: for the same per-run values, the center and its
// confidence interval are benchstat's (benchmath at 95%), to 3 significant
// digits; from RankTestRuns runs a side, so is the U test's p-value (data
// without ties: benchmath's exact U distribution is ours).
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
		if min(n1, n2) < RankTestRuns {
			if row.Test != TestTLog {
				t.Errorf("trial %d: %d+%d runs tested by %q, want %q", trial, n1, n2, row.Test, TestTLog)
			}
			continue
		}
		if want := benchmath.AssumeNothing.Compare(s1, s2).P; !sig3(row.P, want) || row.Test != TestULog {
			t.Errorf("trial %d: %s p %v, benchmath %v", trial, row.Test, row.P, want)
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

// scipy runs a Python script with scipy on JSON input and decodes its JSON
// output; it skips the test where /usr/bin/python3 has no scipy (outside
// CI).
func scipy(t *testing.T, script string, in, out any) {
	t.Helper()
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import scipy.stats").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI needs scipy for /usr/bin/python3 (Debian: python3-scipy; .ci/run installs it)")
		}
		t.Skip("no scipy for /usr/bin/python3 (Debian: python3-scipy)")
	}
	b, _ := json.Marshal(in)
	cmd := exec.Command(py, "-c", "import warnings; warnings.simplefilter('ignore')\n"+script)
	cmd.Stdin = strings.NewReader(string(b))
	cmd.Stderr = os.Stderr
	res, err := cmd.Output()
	if err != nil {
		t.Fatalf("scipy: %v", err)
	}
	if err := json.Unmarshal(res, out); err != nil {
		t.Fatal(err)
	}
}

// TestAgreesWithScipy checks the U test against an independent
// implementation: scipy's exact Mann-Whitney U p-values, and the shift
// interval by inverting scipy's exact test (a shift just inside the
// interval is not rejected at 5%, one just outside is).
func TestAgreesWithScipy(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	type tcase struct {
		Old, New       []float64
		P, Lo, Hi, Eps float64
	}
	var cases []tcase
	for range 30 {
		n1, n2 := RankTestRuns+rng.IntN(8), RankTestRuns+rng.IntN(8)
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
	var got [][]any
	scipy(t, script, cases, &got)
	for i, g := range got {
		method, p := g[0].(string), g[1].(float64)
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

// TestTTestAgreesWithScipy: below RankTestRuns runs the p-value is
// Student's two-sample t-test (pooled variance) on the logarithms of the
// per-run values, or on the values when some are zero, and the change's
// interval at the row's level is the t-interval of the difference of
// means: both as scipy computes them, for 2 to 9 runs a side and at
// family levels down to 0.05/50.
func TestTTestAgreesWithScipy(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	type tcase struct {
		Old, New        []float64
		Logs            bool
		Level           float64
		P, Est, Lo, Hi  float64 // ours, on the test's scale
		Change, CLo, CH float64
	}
	var cases []tcase
	for i := range 40 {
		n1, n2 := 2+rng.IntN(8), 2+rng.IntN(8)
		c := tcase{Old: make([]float64, n1), New: make([]float64, n2), Logs: i%4 != 3}
		for j := range c.Old {
			c.Old[j] = 40e6 * math.Exp(0.05*rng.NormFloat64())
		}
		for j := range c.New {
			c.New[j] = 40e6 * (1 + 0.05*float64(rng.IntN(3))) * math.Exp(0.05*rng.NormFloat64())
		}
		if !c.Logs {
			c.Old[0] = 0 // a run without the event: no logarithms
		}
		m := 1 + rng.IntN(50)
		pairs := make([]Pair, m) // a family of m tests, the others far from significant
		pairs[0] = Pair{Bench: "b", Metric: "p50", Old: c.Old, New: c.New}
		for j := 1; j < m; j++ {
			pairs[j] = Pair{Bench: "b", Metric: "p50", Old: []float64{1, 2, 3}, New: []float64{1, 2, 3}}
		}
		r := Compare(pairs, Options{})[0]
		c.Level, c.P = r.Level, r.P
		c.Change, c.CLo, c.CH = r.Change, r.ChangeLo, r.ChangeHi
		if (r.Test == TestTLog) != c.Logs || r.Test == "" {
			t.Fatalf("case %d: test %q", i, r.Test)
		}
		cases = append(cases, c)
	}
	script := `
import json, sys, math
from scipy import stats
out = []
for c in json.load(sys.stdin):
    x, y = c["Old"], c["New"]
    if c["Logs"]:
        x, y = [math.log(v) for v in x], [math.log(v) for v in y]
    r = stats.ttest_ind(y, x, equal_var=True)
    n1, n2 = len(x), len(y)
    d = sum(y)/n2 - sum(x)/n1
    sp = math.sqrt((sum((v-sum(x)/n1)**2 for v in x) + sum((v-sum(y)/n2)**2 for v in y)) / (n1+n2-2))
    half = stats.t.isf(c["Level"]/2, n1+n2-2) * sp * math.sqrt(1/n1 + 1/n2)
    if c["Logs"]:
        ch = [math.expm1(d), math.expm1(d-half), math.expm1(d+half)]
    else:
        b = sum(c["Old"])/n1
        ch = [d/b, (d-half)/b, (d+half)/b]
    out.append([r.pvalue] + ch)
json.dump(out, sys.stdout)
`
	var got [][]float64
	scipy(t, script, cases, &got)
	for i, g := range got {
		c := cases[i]
		if !sig3(c.P, g[0]) || !sig3(c.Change, g[1]) || !sig3(c.CLo, g[2]) || !sig3(c.CH, g[3]) {
			t.Errorf("case %d (%d+%d runs, logs %v, level %.4g): p %v change %v [%v, %v]; scipy p %v change %v [%v, %v]",
				i, len(c.Old), len(c.New), c.Logs, c.Level, c.P, c.Change, c.CLo, c.CH, g[0], g[1], g[2], g[3])
		}
	}
}

// TestDistributionsAgreeWithScipy: the t critical values and the
// noncentral t power behind Row.Detectable and Plan are scipy's.
func TestDistributionsAgreeWithScipy(t *testing.T) {
	type tcase struct{ Level, DF, Lambda, C, Power float64 }
	var cases []tcase
	for _, df := range []float64{1, 2, 3, 4, 8, 16, 40, 250} {
		for _, level := range []float64{0.05, 0.01, 0.05 / 60, 1e-6} {
			c := tCritical(level, df)
			if c > 1000 {
				continue // scipy's noncentral t (boost) aborts out there
			}
			lambda := c * 1.3
			cases = append(cases, tcase{level, df, lambda, c, tPower(lambda, c, df)})
		}
	}
	script := `
import json, sys
from scipy import stats
out = []
for c in json.load(sys.stdin):
    out.append([stats.t.isf(c["Level"]/2, c["DF"]), stats.nct.sf(c["C"], c["DF"], c["Lambda"])])
json.dump(out, sys.stdout)
`
	var got [][]float64
	scipy(t, script, cases, &got)
	for i, g := range got {
		c := cases[i]
		if !(math.Abs(c.C-g[0]) <= 1e-6*g[0]) {
			t.Errorf("df %v level %v: critical t %v, scipy %v", c.DF, c.Level, c.C, g[0])
		}
		if !(math.Abs(c.Power-g[1]) <= 2e-4) {
			t.Errorf("df %v lambda %v c %v: power %v, scipy %v", c.DF, c.Lambda, c.C, c.Power, g[1])
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
