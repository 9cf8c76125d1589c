package stats

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
)

// readRuns reads every run-*.jsonl under dir (any depth) and labels it.
func readRuns(t *testing.T, dir string) (runs []LabelledRun, raw []float64) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".jsonl" {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		s, err := bench.ReadStream(f, path)
		if err != nil {
			return err
		}
		runs = append(runs, Labelled(s))
		raw = append(raw, math.Round(Summarize(s, DefaultSpikeRule).P99/1e4)/100) // ms
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return runs, raw
}

// Issue #43's check on real runs (BENCHMARKS.md has the commands): the
// mixture's p99 of short runs (GCJITTER_MIX_SHORT, a results directory of
// 5 runs x 200 steps) with its interval, resampling whole runs (the
// bootstrap SE of the log p99 times n/(n-1), Student's t on n-1 degrees of
// freedom, as CompareMixture takes each side), against the raw p99 of long
// runs of the same case (GCJITTER_MIX_LONG, 5 x 5000 steps): pooled over
// their steps and each run's. Skipped without both; it reports, the
// figure is the measurement.
func TestMixtureAgainstLongRuns(t *testing.T) {
	short, long := os.Getenv("GCJITTER_MIX_SHORT"), os.Getenv("GCJITTER_MIX_LONG")
	if short == "" || long == "" {
		t.Skip("set GCJITTER_MIX_SHORT and GCJITTER_MIX_LONG to two results directories")
	}
	sr, sRaw := readRuns(t, short)
	lr, lRaw := readRuns(t, long)
	if len(sr) < 2 || len(lr) == 0 {
		t.Fatalf("%d short and %d long runs: want 2 or more short runs", len(sr), len(lr))
	}
	s, err := NewMixtureSide(sr, math.NaN())
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewMixtureSide(lr, math.NaN())
	if err != nil {
		t.Fatal(err)
	}
	est := s.Quantile(0.99, nil, false)
	rng := rand.New(rand.NewPCG(43, 5))
	w := make([]float64, s.Runs)
	var sum, sum2 float64
	const reps = 2000
	for range reps {
		clear(w)
		for range s.Runs {
			w[rng.IntN(s.Runs)]++
		}
		x := math.Log(s.Quantile(0.99, w, false))
		sum, sum2 = sum+x, sum2+x*x
	}
	m := sum / reps
	se := math.Sqrt(math.Max(0, sum2/reps-m*m) * float64(s.Runs) / float64(s.Runs-1))
	h := tCritical(0.05, float64(s.Runs-1)) * se
	lo, hi := est*math.Exp(-h), est*math.Exp(h)
	var pooled []float64
	for _, r := range lr {
		pooled = append(pooled, r.B...)
		pooled = append(pooled, r.G...)
	}
	SortFloat64s(pooled)
	truth := Quantile(pooled, 0.99)
	var nS, nL int
	for _, r := range sr {
		nS += len(r.B) + len(r.G)
	}
	nL = len(pooled)
	t.Logf("short: %d runs, %d steps, pi %.4f: mixture p99 %.3f ms [%.3f, %.3f] (95%%, runs resampled); the runs' own p99 %v ms", s.Runs, nS, s.Pi, est/1e6, lo/1e6, hi/1e6, sRaw)
	t.Logf("long: %d runs, %d steps, pi %.4f: p99 pooled %.3f ms, mixture %.3f ms; each run's %v ms", l.Runs, nL, l.Pi, truth/1e6, l.Quantile(0.99, nil, false)/1e6, lRaw)
	inside := truth >= lo && truth <= hi
	t.Logf("the long runs' p99 inside the short runs' interval: %v", inside)
}
