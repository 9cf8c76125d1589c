package golden

import (
	"fmt"
	"slices"

	"github.com/gcjitter/gcjitter/results"
)

// BusyShare is the share of the host's CPUs (at least BusyMinCPUs) that
// processes other than a run's own may keep busy, on average while it
// runs, for the run to make a baseline. A load that spans the whole
// session slows every run alike, so the runs agree and no comparison of
// them (Contaminated) can see it; the gate against such a baseline then
// lets a regression pass. Measured here (2 CPUs): a CPU burner beside the
// smoke case read 1.3-1.5 CPUs of other load, a quiet host 0-0.008.
const (
	BusyShare   = 0.25
	BusyMinCPUs = 0.5
)

// BusyLimit is the other load, in CPUs, above which a run on a host of
// cpus CPUs is refused as a baseline.
func BusyLimit(cpus int) float64 { return max(BusyMinCPUs, BusyShare*float64(cpus)) }

// BusyRun is a run made beside other load above BusyLimit.
type BusyRun struct {
	Case, Variant, ID string
	OtherCPUs         float64
}

// busyRuns are the named cases' runs whose recorded other load exceeds the
// host's limit (runs that do not record it are not judged).
func busyRuns(m *results.Manifest, names []string) []BusyRun {
	limit := BusyLimit(m.Host.CPUs)
	var out []BusyRun
	for _, r := range m.Runs {
		if slices.Contains(names, r.Case) && r.OtherCPUs != nil && *r.OtherCPUs > limit {
			out = append(out, BusyRun{Case: r.Case, Variant: r.Variant, ID: r.ID, OtherCPUs: *r.OtherCPUs})
		}
	}
	return out
}

// maxOtherCPUs is the most other load any of a case's runs recorded; 0
// when none did.
func maxOtherCPUs(m *results.Manifest, caseName string) float64 {
	most := 0.0
	for _, r := range m.Runs {
		if r.Case == caseName && r.OtherCPUs != nil {
			most = max(most, *r.OtherCPUs)
		}
	}
	return most
}

// String names the run by its ID (which holds its case and variant).
func (b BusyRun) String() string {
	return fmt.Sprintf("run %s: other processes kept %.2f CPUs busy", b.ID, b.OtherCPUs)
}
