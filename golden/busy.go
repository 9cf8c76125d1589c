package golden

import (
	"fmt"
	"slices"

	"github.com/gcjitter/gcjitter/results"
)

// BusyRun is a run made beside other load above results.BusyLimit.
type BusyRun struct {
	Case, Variant, ID string
	OtherCPUs         float64
}

// busyRuns are the named cases' runs whose recorded other load exceeds the
// host's limit (runs that do not record it are not judged).
func busyRuns(m *results.Manifest, names []string) []BusyRun {
	var out []BusyRun
	for _, r := range m.Runs {
		if slices.Contains(names, r.Case) && r.Busy(m.Host.CPUs) {
			out = append(out, BusyRun{Case: r.Case, Variant: r.Variant, ID: r.ID, OtherCPUs: *r.OtherCPUs})
		}
	}
	return out
}

// maxOtherCPUs is the most other load any of a case's runs recorded; nil
// when none did.
func maxOtherCPUs(m *results.Manifest, caseName string) *float64 {
	var most *float64
	for _, r := range m.Runs {
		if r.Case == caseName && r.OtherCPUs != nil && (most == nil || *r.OtherCPUs > *most) {
			v := *r.OtherCPUs
			most = &v
		}
	}
	return most
}

// Busy says whether the baseline was made beside other load over the
// limit of its host (golden update -allow-busy).
func (p Provenance) Busy() bool {
	return p.OtherCPUs != nil && *p.OtherCPUs > results.BusyLimit(p.CPUs)
}

// String names the run by its ID (which holds its case and variant).
func (b BusyRun) String() string {
	return fmt.Sprintf("run %s: other processes kept %.2f CPUs busy", b.ID, b.OtherCPUs)
}
