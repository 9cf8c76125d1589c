package results

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gcjitter/gcjitter/stats"
)

// MemLimitFlag is -mem-limit SIZE, the memory a job may use, against which
// time to the limit is reckoned; left out, the limit the host probe
// recorded in the results (Host.MemLimit), beside which it lives. Every
// command that takes it registers this type, so SIZE reads the same
// everywhere.
type MemLimitFlag struct {
	Bytes int64 // 0: not set
}

// MemLimitUsage is the flag's help text.
const MemLimitUsage = "memory limit `SIZE` for time to the limit (16GiB, 512MiB, 8G, or bytes; default: the cgroup's limit, else MemTotal, as recorded with the results)"

func (f *MemLimitFlag) String() string {
	if f == nil || f.Bytes == 0 {
		return ""
	}
	return stats.Bytes(float64(f.Bytes))
}

func (f *MemLimitFlag) Set(s string) error {
	n, err := ParseSize(s)
	if err != nil {
		return err
	}
	f.Bytes = n
	return nil
}

// Limit is the limit that applies to results from host h: the flag's, else
// the host's, with where it came from; 0 when neither is known.
func (f *MemLimitFlag) Limit(h Host) (bytes int64, from string) {
	if f != nil && f.Bytes > 0 {
		return f.Bytes, "-mem-limit"
	}
	return h.MemLimit, h.MemLimitFrom
}

// sizeUnits are the suffixes ParseSize knows; K, M, G, T and KB... are
// read as binary, as memory sizes are (a "16G" cgroup is 16 GiB).
var sizeUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
}

// ParseSize reads a memory size: a positive number with an optional unit
// (16GiB, 1.5G, 512MiB, 1073741824).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
	if i < 0 {
		i = len(t)
	}
	mult, ok := sizeUnits[strings.ToLower(strings.TrimSpace(t[i:]))]
	if !ok {
		return 0, fmt.Errorf("unknown unit in %q: want a size such as 16GiB, 512MiB or a number of bytes", s)
	}
	v, err := strconv.ParseFloat(t[:i], 64)
	if err != nil || i == 0 {
		return 0, fmt.Errorf("%q is not a size: want a number with an optional unit, such as 16GiB", s)
	}
	b := v * mult
	if !(b >= 1) || b > math.MaxInt64/2 {
		return 0, errors.New("want a size of at least 1 byte, such as 16GiB")
	}
	return int64(b), nil
}
