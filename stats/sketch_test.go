package stats

import (
	"math"
	"testing"
)

// A sketch answers like the data at its probabilities and in between, on
// data of known quantiles: 0, 1, ..., 9999.
func TestSketch(t *testing.T) {
	xs := make([]float64, 10000)
	for i := range xs {
		xs[i] = float64(i)
	}
	s := NewSketch(xs)
	for _, q := range []float64{0, 0.5, 0.9, 0.99, 0.999, 1} {
		if got, want := s.Quantile(q), Quantile(xs, q); got != want {
			t.Errorf("q%v: sketch %v, data %v", q, got, want)
		}
	}
	// Between grid points the data are linear here, so interpolation is exact.
	for _, q := range []float64{0.3, 0.93, 0.9993} {
		if got, want := s.Quantile(q), Quantile(xs, q); math.Abs(got-want) > 1e-6 {
			t.Errorf("q%v: sketch %v, data %v", q, got, want)
		}
	}
	if s.Steps != 10000 || NewSketch(nil) != nil {
		t.Errorf("steps %d; empty sketch %v", s.Steps, NewSketch(nil))
	}
}
