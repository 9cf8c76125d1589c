package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gcjitter/gcjitter/results"
)

// HostDiffers says how this host differs from the one a baseline was made
// on, in what moves timings (not schedules): CPU model and count, memory,
// kernel, governor, turbo, isolated CPUs, accelerators. Empty when nothing
// known differs.
func (g *Golden) HostDiffers(h results.Host) []string {
	p := g.Provenance
	var out []string
	differ := func(what, then, now string) {
		if then != "" && now != "" && then != now {
			out = append(out, fmt.Sprintf("%s: %s when the baseline was made, %s here", what, then, now))
		}
	}
	differ("CPU model", p.CPUModel, h.CPUModel)
	if p.CPUs > 0 && p.CPUs != h.CPUs {
		differ("CPUs", fmt.Sprint(p.CPUs), fmt.Sprint(h.CPUs))
	}
	if p.MemKB > 0 && h.MemTotalKB > 0 && (float64(h.MemTotalKB) < 0.9*float64(p.MemKB) || float64(h.MemTotalKB) > 1.1*float64(p.MemKB)) {
		differ("memory", gib(p.MemKB), gib(h.MemTotalKB))
	}
	differ("CPU flags (hash)", p.FlagsHash, h.FlagsHash)
	differ("microcode", p.Microcode, h.Microcode)
	differ("caches", p.Caches, h.Caches)
	if p.ThreadsPerCore > 0 && h.ThreadsPerCore > 0 {
		differ("threads per core", fmt.Sprint(p.ThreadsPerCore), fmt.Sprint(h.ThreadsPerCore))
	}
	differ("kernel", p.Kernel, h.Kernel)
	differ("CPU frequency governor", p.Governor, h.Governor)
	differ("turbo", p.Turbo, h.Turbo)
	differ("isolated CPUs", orNone(p.Isolated), orNone(h.IsolatedCPU))
	differ("accelerators", gpuNames(strings.Split(p.GPUs, "; ")), gpuNames(h.GPUs))
	return out
}

// gpuNames are the accelerators' names, without what changes by the
// second (nvidia-smi's clocks, npu-smi's temperatures).
func gpuNames(lines []string) string {
	var names []string
	for _, l := range lines {
		if l == "" {
			continue
		}
		if strings.HasPrefix(l, "npu-smi: ") {
			names = append(names, "npu")
			continue
		}
		name, _, _ := strings.Cut(l, ",")
		names = append(names, strings.TrimSpace(name))
	}
	return strings.Join(names, ", ")
}

func gib(kb int64) string { return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20)) }

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Classes are the host classes with baselines in dir, sorted.
func Classes(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if files, _ := filepath.Glob(filepath.Join(dir, e.Name(), "*.json")); len(files) > 0 {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out
}

// ReadClass reads every baseline of a host class (unreadable ones are
// left out: the gate names them when it reads them).
func ReadClass(dir, class string) []*Golden {
	files, _ := filepath.Glob(filepath.Join(dir, class, "*.json"))
	var out []*Golden
	for _, f := range files {
		if g, err := Read(f); err == nil {
			out = append(out, g)
		}
	}
	return out
}
