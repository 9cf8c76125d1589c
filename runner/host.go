package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gcjitter/gcjitter/results"
)

// ProbeHost reads the host's facts from /proc, /sys, nvidia-smi and npu-smi,
// whichever exist, and warns about what makes timings less trustworthy.
func ProbeHost(ctx context.Context) results.Host {
	h := results.Host{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU()}
	h.Hostname, _ = os.Hostname()
	h.Kernel = readTrim("/proc/sys/kernel/osrelease")
	for _, line := range strings.Split(readTrim("/proc/cpuinfo"), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			h.CPUModel = strings.TrimSpace(v)
			break
		}
	}
	h.Governor = readTrim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
	if v := readTrim("/sys/devices/system/cpu/intel_pstate/no_turbo"); v != "" {
		h.Turbo = map[string]string{"0": "on", "1": "off"}[v]
	} else if v := readTrim("/sys/devices/system/cpu/cpufreq/boost"); v != "" {
		h.Turbo = map[string]string{"1": "on", "0": "off"}[v]
	}
	h.IsolatedCPU = readTrim("/sys/devices/system/cpu/isolated")
	if f := strings.Fields(readTrim("/proc/loadavg")); len(f) > 0 {
		h.LoadAvg, _ = strconv.ParseFloat(f[0], 64)
	}
	for _, line := range strings.Split(readTrim("/proc/meminfo"), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			h.MemTotalKB, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	h.GPUs = append(h.GPUs, toolLines(ctx, "nvidia-smi", "--query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version", "--format=csv,noheader")...)
	if npu := toolLines(ctx, "npu-smi", "info"); len(npu) > 0 {
		h.GPUs = append(h.GPUs, "npu-smi: "+strings.Join(npu, " | "))
	}

	if h.Governor != "" && h.Governor != "performance" {
		h.Warnings = append(h.Warnings, fmt.Sprintf("CPU frequency governor is %q, not \"performance\": step times will drift with frequency", h.Governor))
	}
	if h.Turbo == "on" {
		h.Warnings = append(h.Warnings, "turbo boost is on: clock speed depends on temperature and load")
	}
	if h.LoadAvg > 0.5*float64(h.CPUs) {
		h.Warnings = append(h.Warnings, fmt.Sprintf("host is loaded: 1-minute load average %.2f on %d CPUs", h.LoadAvg, h.CPUs))
	}
	return h
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// toolLines runs a vendor tool if it is installed, briefly, and returns its
// non-empty output lines (nil when absent or failing).
func toolLines(ctx context.Context, tool string, args ...string) []string {
	path, err := exec.LookPath(tool)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, args...).Output()
	if err != nil {
		return nil
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > 40 {
		lines = lines[:40]
	}
	return lines
}
