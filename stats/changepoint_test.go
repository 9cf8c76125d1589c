package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// nightNoise is a night's value around its level: the session drift
// measured on one 2-core host (SD of a night's median about 3.5%, from 13
// resnet sessions: docs/compare.md "Session drift"), with Student-t (4 df)
// tails, because a host now and then has a bad night.
func nightNoise(rng *rand.Rand, sd float64) float64 {
	const df = 4
	z := rng.NormFloat64()
	var chi float64
	for i := 0; i < df; i++ {
		g := rng.NormFloat64()
		chi += g * g
	}
	t := z / math.Sqrt(chi/df)
	return math.Exp(sd * t / math.Sqrt(df/(df-2.0)))
}

const (
	cpTrials = 200
	cpNights = 60
	cpNoise  = 0.035
)

// TestChangePointsKnownTruth: 200 seeded series of 60 nights for each
// truth. A +10% step at night 30 is found within 2 nights in >= 95% of
// series; a flat series gives a false change point in <= 5%.
func TestChangePointsKnownTruth(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	found, falseFlat := 0, 0
	var sizes []float64
	for trial := 0; trial < cpTrials; trial++ {
		step := make([]float64, cpNights)
		flat := make([]float64, cpNights)
		for i := range step {
			level := 50e6
			flat[i] = level * nightNoise(rng, cpNoise)
			if i >= 30 {
				level *= 1.10
			}
			step[i] = level * nightNoise(rng, cpNoise)
		}
		o := ChangePointOptions{Seed: uint64(trial)}
		for _, cp := range ChangePoints(step, o) {
			if cp.Index >= 28 && cp.Index <= 32 && cp.Size > 0 {
				found++
				sizes = append(sizes, cp.Size)
				break
			}
		}
		if len(ChangePoints(flat, o)) > 0 {
			falseFlat++
		}
	}
	t.Logf("+10%% step at night 30: found within 2 nights in %d/%d; flat: false change point in %d/%d", found, cpTrials, falseFlat, cpTrials)
	if found < cpTrials*95/100 {
		t.Errorf("step found in %d/%d series, want >= 95%%", found, cpTrials)
	}
	if falseFlat > cpTrials*5/100 {
		t.Errorf("flat series: %d/%d false change points, want <= 5%%", falseFlat, cpTrials)
	}
}

// TestChangePointsDrift: a series flat for 30 nights that then drifts up
// 0.5% a night is reported (a change point with a positive size after
// night 30, on the nights known so far) within 20 nights of the drift's
// start in >= 95% of 200 series.
func TestChangePointsDrift(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	within, total := 0, 0
	hist := map[int]int{}
	for trial := 0; trial < cpTrials; trial++ {
		xs := make([]float64, cpNights)
		for i := range xs {
			level := 50e6
			if i >= 30 {
				level *= math.Pow(1.005, float64(i-29))
			}
			xs[i] = level * nightNoise(rng, cpNoise)
		}
		first := -1
		for k := 1; k <= 30 && first < 0; k++ {
			for _, cp := range ChangePoints(xs[:30+k], ChangePointOptions{Seed: uint64(trial)}) {
				if cp.Index >= 25 && cp.Size > 0 {
					first = k
					break
				}
			}
		}
		hist[first]++
		total += first
		if first > 0 && first <= 20 {
			within++
		}
	}
	t.Logf("0.5%%/night drift: reported within 20 nights in %d/%d; nights to report: %v", within, cpTrials, hist)
	if within < cpTrials*95/100 {
		t.Errorf("drift reported within 20 nights in %d/%d series, want >= 95%%", within, cpTrials)
	}
}

// TestEnergyMatchesBruteForce: the O(n log n) split statistic is the
// O(n^3) definition's, ties included.
func TestEnergyMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 50; trial++ {
		n := 10 + rng.IntN(60)
		ys := make([]float64, n)
		for i := range ys {
			ys[i] = math.Round(rng.NormFloat64()*4) / 2 // ties too
		}
		var e energy
		tau, q := e.best(ys, 3)
		bt, bq := bruteBest(ys, 3)
		if tau != bt || math.Abs(q-bq) > 1e-9*math.Max(1, math.Abs(bq)) {
			t.Fatalf("n=%d: fast split %d Q %g, brute force %d Q %g", n, tau, q, bt, bq)
		}
	}
}

func bruteBest(ys []float64, minSize int) (int, float64) {
	n := len(ys)
	best, bq := 0, math.Inf(-1)
	for t := minSize; t <= n-minSize; t++ {
		var b, wl, wr float64
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				d := math.Abs(ys[i] - ys[j])
				switch {
				case j < t:
					wl += d
				case i >= t:
					wr += d
				default:
					b += d
				}
			}
		}
		m, k := float64(t), float64(n-t)
		q := m * k / float64(n) * (2*b/(m*k) - wl/(m*(m-1)/2) - wr/(k*(k-1)/2))
		if q > bq {
			best, bq = t, q
		}
	}
	return best, bq
}

// TestChangePointSizeInterval: the 95% interval of a clean +25% step
// holds the truth about 95% of the time (a spurious split beside it biases
// the levels a little, hence the 90% floor).
func TestChangePointSizeInterval(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	covered := 0
	for trial := 0; trial < cpTrials; trial++ {
		xs := make([]float64, cpNights)
		for i := range xs {
			level := 1.0
			if i >= 30 {
				level = 1.25
			}
			xs[i] = level * math.Exp(0.03*rng.NormFloat64())
		}
		var step *ChangePoint
		for _, cp := range ChangePoints(xs, ChangePointOptions{Seed: uint64(trial)}) {
			if cp.Index == 30 {
				step = &cp
			}
		}
		if step == nil {
			t.Fatalf("trial %d: a +25%% step of 8 SDs not found at night 30", trial)
		}
		if step.Lo <= 0.25 && 0.25 <= step.Hi {
			covered++
		}
	}
	t.Logf("95%% interval of a +25%% step holds the truth in %d/%d", covered, cpTrials)
	if covered < cpTrials*90/100 {
		t.Errorf("interval covers the true size in %d/%d, want about 95%%", covered, cpTrials)
	}
}
