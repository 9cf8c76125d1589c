package stats

import "testing"

// TestFormatValue pins the units reports and history print: benchstat's
// scaling, seconds spelled out, a GC share as a percentage.
func TestFormatValue(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{
		{0.0401, "sec/step", "40.10ms"},
		{1234, "collections/kstep", "1.234k"},
		{1234, "B", "1.205Ki"},
		{0.0125, "gc-share", "1.25%"},
	} {
		if got := FormatValue(c.v, c.unit); got != c.want {
			t.Errorf("FormatValue(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}
