package stats

import "slices"

// Sketch is a set of runs' pooled step-time quantiles at fixed
// probabilities: what a baseline keeps of its steps (a few dozen numbers
// that review well in a diff, not every step), so the gate can still draw
// the baseline's tail beside the new runs'.
type Sketch struct {
	Steps int       `json:"steps"`
	P     []float64 `json:"p"`
	NS    []float64 `json:"ns"`
}

// sketchP is dense in the tail, where GC jitter lives.
var sketchP = []float64{0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.98, 0.99, 0.995, 0.998, 0.999, 0.9995, 0.9999, 1}

// NewSketch sketches sorted step times (ns); nil for no steps.
func NewSketch(sorted []float64) *Sketch {
	if len(sorted) == 0 {
		return nil
	}
	s := &Sketch{Steps: len(sorted), P: slices.Clone(sketchP), NS: make([]float64, len(sketchP))}
	for i, p := range sketchP {
		s.NS[i] = Quantile(sorted, p)
	}
	return s
}

// Quantile interpolates the sketch linearly between its probabilities.
func (s *Sketch) Quantile(q float64) float64 {
	i, found := slices.BinarySearch(s.P, q)
	switch {
	case found:
		return s.NS[i]
	case i == 0:
		return s.NS[0]
	case i == len(s.P):
		return s.NS[len(s.NS)-1]
	}
	f := (q - s.P[i-1]) / (s.P[i] - s.P[i-1])
	return s.NS[i-1] + f*(s.NS[i]-s.NS[i-1])
}
