package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
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
	cpuInfo(readTrim("/proc/cpuinfo"), &h)
	h.Caches = cacheSizes("/sys/devices/system/cpu/cpu0/cache")
	if sib := readTrim("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list"); sib != "" {
		h.ThreadsPerCore = cpuListLen(sib)
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
	h.MemLimit, h.MemLimitFrom = MemLimit("/", h.MemTotalKB<<10)
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

// MemLimit is the memory this process's cgroup may use, read under root
// ("/" on a host, a directory laid out like one in tests): cgroup v2's
// memory.max, else v1's memory.limit_in_bytes, when below memTotal (an
// unlimited cgroup says "max" or a number near 2^63); else memTotal. from
// names the source; 0 and "" when nothing is known.
func MemLimit(root string, memTotal int64) (limit int64, from string) {
	if memTotal > 0 {
		limit, from = memTotal, "MemTotal (/proc/meminfo)"
	}
	for _, line := range strings.Split(readTrim(filepath.Join(root, "proc/self/cgroup")), "\n") {
		// v2: "0::/path"; v1: "N:controller,...:/path".
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		// The cgroup's own directory, else the mount's root (a container
		// sees its cgroup there); v2 is under unified/ on a hybrid host.
		var files []string
		switch {
		case f[0] == "0" && f[1] == "":
			for _, mnt := range []string{"sys/fs/cgroup", "sys/fs/cgroup/unified"} {
				files = append(files, filepath.Join(root, mnt, f[2], "memory.max"), filepath.Join(root, mnt, "memory.max"))
			}
		case slices.Contains(strings.Split(f[1], ","), "memory"):
			mnt := "sys/fs/cgroup/memory"
			files = append(files, filepath.Join(root, mnt, f[2], "memory.limit_in_bytes"), filepath.Join(root, mnt, "memory.limit_in_bytes"))
		}
		var n int64
		var file string
		for _, file = range files {
			if v := readTrim(file); v != "" {
				n, _ = strconv.ParseInt(v, 10, 64)
				break
			}
		}
		if n <= 0 || (limit > 0 && n >= limit) {
			continue // "max", absent, or no tighter than the host
		}
		file, _ = filepath.Rel(root, file)
		file = "/" + file
		name := "cgroup v2 memory.max"
		if f[0] != "0" {
			name = "cgroup v1 memory.limit_in_bytes"
		}
		limit, from = n, name+" ("+file+")"
	}
	return limit, from
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

// cpuInfo reads the first processor's facts from /proc/cpuinfo's text:
// model, clock, microcode and a hash of its flags.
func cpuInfo(text string, h *results.Host) {
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			return // the blank line after the first processor
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "model name":
			h.CPUModel = v
		case "cpu MHz":
			h.MHz, _ = strconv.ParseFloat(v, 64)
		case "microcode":
			h.Microcode = v
		case "flags", "Features":
			flags := strings.Fields(v)
			slices.Sort(flags)
			sum := sha256.Sum256([]byte(strings.Join(flags, " ")))
			h.FlagsHash = hex.EncodeToString(sum[:6])
		}
	}
}

// cacheSizes lists a CPU's caches by level from its sysfs cache
// directory: "L1d 32K, L1i 32K, L2 1024K, L3 32768K".
func cacheSizes(dir string) string {
	var out []string
	for i := 0; ; i++ {
		d := filepath.Join(dir, fmt.Sprintf("index%d", i))
		level, size := readTrim(filepath.Join(d, "level")), readTrim(filepath.Join(d, "size"))
		if level == "" || size == "" {
			break
		}
		suffix := map[string]string{"Data": "d", "Instruction": "i"}[readTrim(filepath.Join(d, "type"))]
		out = append(out, "L"+level+suffix+" "+size)
	}
	return strings.Join(out, ", ")
}

// cpuListLen counts the CPUs of a sysfs CPU list such as "0-1,4" (0 when
// it cannot be read).
func cpuListLen(list string) int {
	n := 0
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}
