package results

// BusyShare is the share of the host's CPUs (at least BusyMinCPUs) that
// processes other than a run's own may keep busy, on average while it
// runs (Run.OtherCPUs), for its timings to be the workload's. A load that
// spans a whole session slows every run alike, so the runs agree and no
// comparison of them can see it: golden update refuses such runs, the gate
// and the run report say so. Measured on a 2-core VM: a CPU burner beside
// the smoke case read 1.3-1.5 CPUs of other load, a quiet host 0-0.008.
const (
	BusyShare   = 0.25
	BusyMinCPUs = 0.5
)

// BusyLimit is the other load, in CPUs, above which a run on a host of
// cpus CPUs was made on a busy host.
func BusyLimit(cpus int) float64 { return max(BusyMinCPUs, BusyShare*float64(cpus)) }

// BusyOf counts the runs made beside other load on a host of cpus CPUs,
// and the most load any of them saw.
func BusyOf(runs []*Run, cpus int) (n int, most float64) {
	for _, r := range runs {
		if r.Busy(cpus) {
			n++
			most = max(most, *r.OtherCPUs)
		}
	}
	return n, most
}

// Busy says whether the run recorded other load above the limit of a host
// of cpus CPUs (false where it recorded none).
func (r *Run) Busy(cpus int) bool {
	return r.OtherCPUs != nil && *r.OtherCPUs > BusyLimit(cpus)
}
