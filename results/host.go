package results

// Host is what the results record about the machine, and what looks wrong
// with it for benchmarking.
type Host struct {
	Hostname    string   `json:"hostname"`
	OS          string   `json:"os"`
	Arch        string   `json:"arch"`
	Kernel      string   `json:"kernel,omitempty"`
	CPUModel    string   `json:"cpu_model,omitempty"`
	CPUs        int      `json:"cpus"`
	Governor    string   `json:"governor,omitempty"`
	Turbo       string   `json:"turbo,omitempty"` // on, off, or empty when unknown
	IsolatedCPU string   `json:"isolated_cpus,omitempty"`
	LoadAvg     float64  `json:"load_avg_1m"`
	MemTotalKB  int64    `json:"mem_total_kb,omitempty"`
	GPUs        []string `json:"gpus,omitempty"` // from nvidia-smi or npu-smi
	Warnings    []string `json:"warnings,omitempty"`
}
