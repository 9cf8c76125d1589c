package runner

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/results"
)

// BytesPerStep bounds what one step of one rank writes to its record
// stream on average: a step record and its collections' events (about
// 200-300 bytes on the built-in cases; GC-heavy steps more).
const BytesPerStep = 1024

// FreeBytes is the free space for an unprivileged writer of the file
// system holding path (its nearest existing parent); -1 when unknown.
func FreeBytes(path string) int64 {
	for p := path; ; p = filepath.Dir(p) {
		var st syscall.Statfs_t
		if err := syscall.Statfs(p, &st); err == nil {
			return int64(st.Bavail) * int64(st.Bsize)
		}
		if p == filepath.Dir(p) {
			return -1
		}
	}
}

// PlannedBytes is what the cases' runs will write at most, by BytesPerStep.
func PlannedBytes(cs []*cases.Case) int64 {
	var n int64
	for _, c := range cs {
		n += int64(c.Runs) * int64(len(c.Variants)) * int64(max(c.Ranks, 1)) * int64(c.Steps+c.Warmup) * BytesPerStep
	}
	return n
}

// SystemCheck is what on a host moves step times, with advice: gcjitter
// system prints it, changing nothing (pyperf system show's role).
type SystemCheck struct {
	Host      results.Host
	FreeBytes int64
	Dir       string
	Advice    []string
	// Filled by the caller from the baselines: the host class, how many
	// baselines it has, how this host differs from theirs, and the
	// classes that have baselines.
	Class     string
	Baselines int
	Differs   []string
	// Speed is this host's calibration, and Speeds how it compares with
	// each baseline of the class (results.CompareSpeed), one line per
	// distinct comparison naming its cases.
	Speed   *results.Calibration
	Speeds  []string
	Classes []string
	// Load is what other processes did while the host was watched
	// (AddLoad); nil when it was not.
	Load *SampledLoad
}

// SampledLoad is the host watched for a while: the CPUs other processes
// kept busy on average, and the busiest of them.
type SampledLoad struct {
	Over      time.Duration
	OtherCPUs float64
	Busiest   []ProcCPU
}

// AddLoad records a sample of the other load (OtherLoad) and advises when
// it is over what a baseline may be made beside (results.BusyLimit).
func (s *SystemCheck) AddLoad(l SampledLoad) {
	s.Load = &l
	if limit := results.BusyLimit(s.Host.CPUs); l.OtherCPUs > limit {
		s.Advice = append(s.Advice, fmt.Sprintf("other processes keep %.2f CPUs busy (%s): golden update refuses runs beside more than %.2f, and every run is slowed alike; stop them first",
			l.OtherCPUs, busiestText(l.Busiest), limit))
	}
}

func busiestText(ps []ProcCPU) string {
	if len(ps) == 0 {
		return "none that ran through the whole watch: short-lived processes"
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%s (pid %d) %.2f", p.Name, p.PID, p.CPUs)
	}
	return strings.Join(parts, ", ")
}

// CheckSystem looks at the host's facts (ProbeHost) and the free space
// where results go.
func CheckSystem(h results.Host, dir string) *SystemCheck {
	s := &SystemCheck{Host: h, FreeBytes: FreeBytes(dir), Dir: dir}
	advise := func(format string, args ...any) { s.Advice = append(s.Advice, fmt.Sprintf(format, args...)) }
	switch h.Governor {
	case "performance":
	case "":
		advise("no CPU frequency control visible (a VM, or no cpufreq driver): the clock is the hypervisor's or firmware's, so expect sessions to differ (a gate allows a session drift: docs/compare.md)")
	default:
		advise("CPU frequency governor %q: set performance (cpupower frequency-set -g performance, or pyperf system tune) so step times do not follow the clock", h.Governor)
	}
	if h.Turbo == "on" {
		advise("turbo boost is on: turn it off (echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo, or 0 > .../cpufreq/boost) so the clock does not follow temperature")
	}
	if h.IsolatedCPU == "" && h.CPUs > 2 {
		advise("no isolated CPUs: for the quietest runs boot with isolcpus=LIST and give the cases cpus: LIST")
	}
	if h.LoadAvg > 0.5*float64(h.CPUs) {
		advise("the host is loaded (1-minute load %.2f on %d CPUs): wait for it, or gate with -timing report on a shared host", h.LoadAvg, h.CPUs)
	}
	if s.FreeBytes >= 0 && s.FreeBytes < 1<<30 {
		advise("%s free where results go: runs stop when the disk fills", bytesText(s.FreeBytes))
	}
	return s
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// Write prints the check.
func (s *SystemCheck) Write(w io.Writer) {
	h := s.Host
	fmt.Fprintf(w, "host: %s, %s/%s, kernel %s\n", h.Hostname, h.OS, h.Arch, orUnknown(h.Kernel))
	fmt.Fprintf(w, "CPU: %s, %d CPUs; memory %.1f GiB\n", orUnknown(h.CPUModel), h.CPUs, float64(h.MemTotalKB)/(1<<20))
	fmt.Fprintf(w, "frequency governor: %s; turbo: %s; isolated CPUs: %s\n", orUnknown(h.Governor), orUnknown(h.Turbo), map[bool]string{true: "none", false: h.IsolatedCPU}[h.IsolatedCPU == ""])
	fmt.Fprintf(w, "load: %.2f (1 minute) on %d CPUs\n", h.LoadAvg, h.CPUs)
	if l := s.Load; l != nil {
		fmt.Fprintf(w, "other load: %.2f CPUs over %s (busiest: %s)\n", l.OtherCPUs, l.Over, busiestText(l.Busiest))
	}
	acc := "none"
	if len(h.GPUs) > 0 {
		acc = strings.Join(h.GPUs, "; ")
	}
	fmt.Fprintf(w, "accelerators: %s\n", acc)
	if s.FreeBytes >= 0 {
		abs, _ := filepath.Abs(s.Dir)
		fmt.Fprintf(w, "free disk where results go (%s): %s\n", abs, bytesText(s.FreeBytes))
	}
	fmt.Fprintf(w, "host class: %s", s.Class)
	switch {
	case s.Baselines > 0:
		fmt.Fprintf(w, " (%d baselines)\n", s.Baselines)
	case len(s.Classes) > 0:
		fmt.Fprintf(w, " (no baselines; classes with baselines: %s)\n", strings.Join(s.Classes, ", "))
	default:
		fmt.Fprintln(w, " (no baselines)")
	}
	for _, d := range s.Differs {
		fmt.Fprintf(w, "differs from the baseline's host: %s\n", d)
	}
	if s.Speed.Known() {
		fmt.Fprintf(w, "host speed (calibration): %s\n", s.Speed)
	}
	for _, sp := range s.Speeds {
		fmt.Fprintf(w, "speed against the baselines of %s\n", sp)
	}
	if len(s.Advice) == 0 {
		fmt.Fprintln(w, "advice: none; this host is set up for stable timings")
		return
	}
	fmt.Fprintln(w, "advice:")
	for _, a := range s.Advice {
		fmt.Fprintf(w, "  - %s\n", a)
	}
}
