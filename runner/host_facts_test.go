package runner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gcjitter/gcjitter/results"
)

func TestHostFactsBeyondTheModelString(t *testing.T) {
	const cpuinfo = `processor	: 0
vendor_id	: AuthenticAMD
model name	: AMD EPYC
microcode	: 0x1000065
cpu MHz		: 2596.136
flags		: fpu sse2 avx2 avx512f

processor	: 1
model name	: Something Else
flags		: fpu
`
	var h, other results.Host
	cpuInfo(cpuinfo, &h)
	if h.CPUModel != "AMD EPYC" || h.Microcode != "0x1000065" || h.MHz != 2596.136 || len(h.FlagsHash) != 12 {
		t.Fatalf("cpuInfo read %+v", h)
	}
	// The same flags in another order hash alike; one flag less does not.
	cpuInfo("flags : avx512f avx2 sse2 fpu\n", &other)
	if other.FlagsHash != h.FlagsHash {
		t.Errorf("flags hash depends on their order: %s vs %s", other.FlagsHash, h.FlagsHash)
	}
	cpuInfo("flags : fpu sse2 avx2\n", &other)
	if other.FlagsHash == h.FlagsHash {
		t.Error("a host without AVX-512 has the same flags hash")
	}

	dir := t.TempDir()
	for i, c := range [][3]string{{"1", "Data", "32K"}, {"1", "Instruction", "32K"}, {"2", "Unified", "1024K"}, {"3", "Unified", "32768K"}} {
		d := filepath.Join(dir, "index"+string(rune('0'+i)))
		os.MkdirAll(d, 0o755)
		for j, name := range []string{"level", "type", "size"} {
			os.WriteFile(filepath.Join(d, name), []byte(c[j]+"\n"), 0o644)
		}
	}
	if got, want := cacheSizes(dir), "L1d 32K, L1i 32K, L2 1024K, L3 32768K"; got != want {
		t.Errorf("cacheSizes = %q, want %q", got, want)
	}
	for list, want := range map[string]int{"0": 1, "0,64": 2, "0-1": 2, "2-5,8": 5, "x": 0, "3-1": 0} {
		if got := cpuListLen(list); got != want {
			t.Errorf("cpuListLen(%q) = %d, want %d", list, got, want)
		}
	}
}

// The calibration measures something: both parts take time, and a point
// has a cost.
func TestCalibrateMeasures(t *testing.T) {
	p := Calibrate()
	if p.WalkNS <= 0 || p.ComputeNS <= 0 || p.Cost() <= 0 || p.At.IsZero() {
		t.Fatalf("Calibrate() = %+v", p)
	}
}
