package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSortFloat64sAgreesWithSlicesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 100, 511, 512, 5000, 50_000} {
		for _, gen := range []func() float64{
			func() float64 { return float64(int64(40e6 * (1 + 0.1*rng.NormFloat64()))) },
			func() float64 { return rng.NormFloat64() * 1e3 },
			func() float64 {
				return []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1)}[rng.IntN(6)]
			},
		} {
			x := make([]float64, n)
			for i := range x {
				x[i] = gen()
			}
			want := slices.Clone(x)
			slices.Sort(want)
			SortFloat64s(x)
			for i := range x {
				if x[i] != want[i] {
					t.Fatalf("n=%d: at %d got %v, want %v", n, i, x[i], want[i])
				}
			}
		}
	}
	x := []float64{3, math.NaN(), 1}
	x = append(x, make([]float64, 600)...)
	SortFloat64s(x)
	if !math.IsNaN(x[0]) || x[len(x)-1] != 3 {
		t.Fatalf("NaN: got %v ... %v", x[0], x[len(x)-1])
	}
}

func BenchmarkSortFloat64s(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 50_000)
	for i := range x {
		x[i] = float64(int64(40e6 * (1 + 0.1*rng.NormFloat64())))
	}
	y := make([]float64, len(x))
	b.Run("radix", func(b *testing.B) {
		for b.Loop() {
			copy(y, x)
			SortFloat64s(y)
		}
	})
	b.Run("slices", func(b *testing.B) {
		for b.Loop() {
			copy(y, x)
			slices.Sort(y)
		}
	})
}
