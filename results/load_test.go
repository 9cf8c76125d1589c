package results

import (
	"strings"
	"testing"
)

// FuzzBenchfmtCompare: any two benchfmt inputs either fail to load with an
// InputError or compare without panicking, every row with a verdict.
func FuzzBenchfmtCompare(f *testing.F) {
	f.Add("BenchmarkA 10 5 p50-ns/step\nBenchmarkA 10 6 p50-ns/step\n", "BenchmarkA 10 7 p50-ns/step\n")
	f.Add("Unit x better=higher\nBenchmarkA 1 NaN x\n", "BenchmarkA 1 -3 x 4 gen2-collections/kstep\n")
	f.Add("BenchmarkA-2 1 0 gc-share\n", "BenchmarkA-2 1 0 gc-share\nBenchmarkA-2 1 1e308 gc-share\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		old, err1 := readBenchfmt(strings.NewReader(a), "old")
		new, err2 := readBenchfmt(strings.NewReader(b), "new")
		for _, err := range []error{err1, err2} {
			if err != nil {
				if _, ok := err.(*InputError); !ok {
					t.Fatalf("error of type %T: %v", err, err)
				}
			}
		}
		if err1 != nil || err2 != nil {
			return
		}
		c := Compare(old, new, CompareOptions{})
		for _, r := range c.Rows {
			if r.Verdict == "" {
				t.Fatalf("row %s %s without a verdict", r.Bench, r.Metric)
			}
		}
	})
}
