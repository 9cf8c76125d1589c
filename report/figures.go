package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"github.com/gcjitter/gcjitter/results"
)

// figureSide is one line of a figure: a side of a comparison (old, new, a
// baseline's sketch) or one policy of a case.
type figureSide struct {
	Label string
	Color color.Color
	Steps *results.Steps
	// sorted is every run's steps pooled and sorted (nil for a sketch).
	sorted []float64
}

// figureGroup is what one section of the page draws: its sides on shared
// axes.
type figureGroup struct {
	Title string
	// Benches are the benchmarks whose spike lines the section prints.
	Benches []string
	Sides   []figureSide
}

// n is the side's pooled step count (a sketch's for a baseline).
func (s *figureSide) n() int {
	if len(s.sorted) > 0 {
		return len(s.sorted)
	}
	if s.Steps != nil && s.Steps.Sketch != nil {
		return s.Steps.Sketch.Steps
	}
	return 0
}

// figureGroups decides the page's sections. A comparison of two inputs has
// one section per benchmark, old and new overlaid; one results directory
// (its policies, compared with a reference variant or not) has one section
// per case with every variant overlaid.
func figureGroups(d *Doc) []figureGroup {
	var out []figureGroup
	if d.Comparison != nil && d.Reference == "" {
		labels := [2]string{"old", "new"}
		for _, bench := range benchOrder(d) {
			g := figureGroup{Title: bench, Benches: []string{bench}}
			for i, s := range d.Steps[bench] {
				if s != nil && (len(s.Runs) > 0 || s.Sketch != nil) {
					g.Sides = append(g.Sides, newFigureSide(labels[i], sideColor(i), s))
				}
			}
			if len(g.Sides) > 0 {
				out = append(out, g)
			}
		}
		return out
	}
	byCase := map[string]*figureGroup{}
	var order []string
	for _, bench := range policyOrder(d) {
		s := d.Steps[bench][0]
		if s == nil || len(s.Runs) == 0 {
			continue
		}
		name, variant := results.CaseOf(bench), results.VariantOf(bench)
		if name == "" {
			name, variant = bench, bench
		}
		g := byCase[name]
		if g == nil {
			g = &figureGroup{Title: "case " + name}
			byCase[name] = g
			order = append(order, name)
		}
		g.Benches = append(g.Benches, bench)
		g.Sides = append(g.Sides, newFigureSide(variant, policyColors[len(g.Sides)%len(policyColors)], s))
	}
	for _, name := range order {
		out = append(out, *byCase[name])
	}
	return out
}

// policyOrder lists a results directory's benchmarks: the manifest's case
// and variant order, the reference variant first in its case.
func policyOrder(d *Doc) []string {
	var out []string
	if m := d.Manifest; m != nil {
		for _, c := range m.Cases {
			var names []string
			for _, v := range c.Variants {
				b := results.BenchName(c.Name, v.Name)
				if _, ok := d.Steps[b]; !ok {
					continue
				}
				if v.Name == d.Reference {
					names = append([]string{b}, names...)
				} else {
					names = append(names, b)
				}
			}
			out = append(out, names...)
		}
	}
	var rest []string
	for b := range d.Steps {
		if !slices.Contains(out, b) {
			rest = append(rest, b)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

func newFigureSide(label string, c color.Color, s *results.Steps) figureSide {
	return figureSide{Label: label, Color: c, Steps: s, sorted: s.PooledSorted()}
}

// Colours of policies drawn together: distinct, and none of them the
// generations' marker colours.
var policyColors = []color.Color{
	color.RGBA{R: 31, G: 119, B: 180, A: 255}, color.RGBA{R: 255, G: 127, B: 14, A: 255},
	color.RGBA{R: 44, G: 160, B: 44, A: 255}, color.RGBA{R: 23, G: 190, B: 207, A: 255},
	color.RGBA{R: 140, G: 86, B: 75, A: 255}, color.RGBA{R: 227, G: 119, B: 194, A: 255},
	color.RGBA{R: 188, G: 189, B: 34, A: 255}, color.RGBA{R: 60, G: 60, B: 60, A: 255},
}

func cssColor(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}

// timeRange is the group's fastest and slowest step (ns), sketches
// included.
func (g *figureGroup) timeRange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range g.Sides {
		switch {
		case len(s.sorted) > 0:
			lo, hi = min(lo, s.sorted[0]), max(hi, s.sorted[len(s.sorted)-1])
		case s.Steps.Sketch != nil:
			ns := s.Steps.Sketch.NS
			lo, hi = min(lo, ns[0]), max(hi, ns[len(ns)-1])
		}
	}
	return lo, hi
}

// logTime: a time axis is logarithmic when the slowest step is more than
// ten times the fastest; a linear one would squash the body into a line.
func (g *figureGroup) logTime() bool {
	lo, hi := g.timeRange()
	return lo > 0 && hi/lo > 10
}

// quantileAt is the q-quantile of sorted with the i-th smallest of n at
// q = (i+0.5)/n: the slowest step sits at q = 1-0.5/n, which the nines
// axis can draw (at log10(2n)), so a tail ends at its maximum.
func quantileAt(sorted []float64, q float64) float64 {
	n := len(sorted)
	pos := q*float64(n) - 0.5
	switch {
	case pos <= 0:
		return sorted[0]
	case pos >= float64(n-1):
		return sorted[n-1]
	}
	i := int(pos)
	f := pos - float64(i)
	return sorted[i] + f*(sorted[i+1]-sorted[i])
}

// nines is the quantile axis's coordinate: 1 at p90, 2 at p99.
func nines(q float64) float64 { return -math.Log10(1 - q) }

// tailCurve is a side's quantile function on the nines axis, up to its
// slowest step: points even in q (the body), even in nines (the tail) and
// the slowest steps themselves. Times in ns.
func (s *figureSide) tailCurve() (xs, ys []float64) {
	n := s.n()
	if n == 0 {
		return nil, nil
	}
	quantile := func(q float64) float64 { return quantileAt(s.sorted, q) }
	if len(s.sorted) == 0 {
		quantile = s.Steps.Sketch.Quantile
	}
	top := 1 - 0.5/float64(n)
	var qs []float64
	for i := range 101 {
		qs = append(qs, min(top, max(0.5/float64(n), float64(i)/100)))
	}
	maxX := nines(top)
	for j := range 301 {
		qs = append(qs, 1-math.Pow(10, -maxX*float64(j)/300))
	}
	if len(s.sorted) > 0 {
		for i := max(0, n-100); i < n; i++ {
			qs = append(qs, (float64(i)+0.5)/float64(n))
		}
	}
	slices.Sort(qs)
	qs = slices.Compact(qs)
	for _, q := range qs {
		q = min(q, top)
		x := nines(q)
		if len(xs) > 0 && x <= xs[len(xs)-1] {
			continue
		}
		xs, ys = append(xs, x), append(ys, quantile(q))
	}
	if len(s.sorted) == 0 { // a sketch ends at its recorded maximum
		ys[len(ys)-1] = s.Steps.Sketch.NS[len(s.Steps.Sketch.NS)-1]
	}
	return xs, ys
}

// histBins are a group's histogram bin edges (ns) from its fastest to its
// slowest step: log-spaced when the time axis is.
func (g *figureGroup) histBins(bins int) []float64 {
	lo, hi := g.timeRange()
	if math.IsInf(lo, 0) {
		return nil
	}
	if hi <= lo {
		hi = lo*1.01 + 1
	}
	edges := make([]float64, bins+1)
	for i := range edges {
		f := float64(i) / float64(bins)
		if g.logTime() {
			edges[i] = lo * math.Pow(hi/lo, f)
		} else {
			edges[i] = lo + (hi-lo)*f
		}
	}
	edges[bins] = hi
	return edges
}

// histShares is the share of a side's steps in each bin (the last bin
// holds the slowest step).
func (s *figureSide) histShares(edges []float64) []float64 {
	if len(s.sorted) == 0 || len(edges) < 2 {
		return nil
	}
	shares := make([]float64, len(edges)-1)
	for _, v := range s.sorted {
		i, _ := slices.BinarySearch(edges, v)
		// v in (edges[i-1], edges[i]]: bin i-1; the fastest step opens bin 0.
		shares[min(max(i-1, 0), len(shares)-1)]++
	}
	for i := range shares {
		shares[i] /= float64(len(s.sorted))
	}
	return shares
}
