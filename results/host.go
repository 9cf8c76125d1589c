package results

// Host is what the results record about the machine, and what looks wrong
// with it for benchmarking.
type Host struct {
	Hostname    string  `json:"hostname"`
	OS          string  `json:"os"`
	Arch        string  `json:"arch"`
	Kernel      string  `json:"kernel,omitempty"`
	CPUModel    string  `json:"cpu_model,omitempty"`
	CPUs        int     `json:"cpus"`
	Governor    string  `json:"governor,omitempty"`
	Turbo       string  `json:"turbo,omitempty"` // on, off, or empty when unknown
	IsolatedCPU string  `json:"isolated_cpus,omitempty"`
	LoadAvg     float64 `json:"load_avg_1m"`
	MemTotalKB  int64   `json:"mem_total_kb,omitempty"`
	// MemLimit is the memory the worker may use, in bytes, and MemLimitFrom
	// where it came from: the cgroup's limit (v2 memory.max, v1
	// memory.limit_in_bytes) where it is below MemTotal, else MemTotal.
	// Time to the limit is reckoned against it unless -mem-limit says.
	MemLimit     int64    `json:"mem_limit_bytes,omitempty"`
	MemLimitFrom string   `json:"mem_limit_from,omitempty"`
	GPUs         []string `json:"gpus,omitempty"` // from nvidia-smi or npu-smi
	// What a model string hides: two "AMD EPYC" hosts can differ 2x in
	// speed. MHz is cpu0's clock when probed; Caches the cache sizes by
	// level ("L1d 32K, L1i 32K, L2 1024K, L3 32768K"); FlagsHash a short
	// hash of the CPU flags (AVX-512 or not changes torch's kernels);
	// Microcode the revision; ThreadsPerCore the SMT siblings of cpu0.
	MHz            float64  `json:"cpu_mhz,omitempty"`
	Caches         string   `json:"caches,omitempty"`
	FlagsHash      string   `json:"cpu_flags_hash,omitempty"`
	Microcode      string   `json:"microcode,omitempty"`
	ThreadsPerCore int      `json:"threads_per_core,omitempty"`
	Warnings       []string `json:"warnings,omitempty"`
}
