package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The worker validates its own flags; these checks repeat its grammar in Go
// so a case file is rejected, with its line, before any worker starts.
// TestGoAndPythonAgree keeps the two in step.

// Models are the worker's models.
var Models = []string{"mlp", "gpt", "resnet", "none"}

// GarbagePatterns are the worker's garbage patterns.
var GarbagePatterns = []string{"pairs", "ring", "graph", "tensor-holders", "traceback", "logdict"}

// ValidateModel checks a model name.
func ValidateModel(m string) error {
	if !slices.Contains(Models, m) {
		return fmt.Errorf("unknown model %q (want %s)", m, strings.Join(Models, ", "))
	}
	return nil
}

// ValidateGarbage checks patterns joined by +, or none.
func ValidateGarbage(g string) error {
	if g == "" || g == "none" {
		return nil
	}
	for _, p := range strings.Split(g, "+") {
		if !slices.Contains(GarbagePatterns, p) {
			return fmt.Errorf("unknown garbage pattern %q (want %s, or none; join with +)", p, strings.Join(GarbagePatterns, ", "))
		}
	}
	return nil
}

// ValidateDevice checks auto, cpu, cuda[:i] or npu[:i].
func ValidateDevice(d string) error {
	kind, idx, hasIdx := strings.Cut(d, ":")
	switch kind {
	case "auto", "cpu":
		if hasIdx {
			return fmt.Errorf("device %q takes no index", d)
		}
		return nil
	case "cuda", "npu":
		if hasIdx {
			if n, err := strconv.Atoi(idx); err != nil || n < 0 {
				return fmt.Errorf("device %q: the index must be an integer >= 0", d)
			}
		}
		return nil
	}
	return fmt.Errorf("unknown device %q (want auto, cpu, cuda[:i] or npu[:i])", d)
}

// Policy is a parsed GC policy (see docs/worker.md).
type Policy struct {
	Disabled            bool
	Threshold           []int // nil when not set
	Freeze              bool
	ManualEvery         int // 0 when not manual
	ManualGen           int
	CollectEveryStep    bool
	EmptyCacheEveryStep bool
}

// ParsePolicy parses a policy such as "default", "threshold:700,10,1000"
// or "freeze+manual:100:1".
func ParsePolicy(text string) (Policy, error) {
	p := Policy{ManualGen: 2}
	if text == "" {
		return p, fmt.Errorf("empty GC policy")
	}
	bad := func(format string, args ...any) (Policy, error) {
		return Policy{}, fmt.Errorf("policy %q: %s", text, fmt.Sprintf(format, args...))
	}
	parts := strings.Split(text, "+")
	seen := map[string]bool{}
	for _, part := range parts {
		name, arg, hasArg := strings.Cut(part, ":")
		if seen[name] {
			return bad("%q given twice", name)
		}
		seen[name] = true
		switch name {
		case "default", "disabled", "freeze", "collect-every-step", "empty-cache-every-step":
			if hasArg {
				return bad("%q takes no argument", name)
			}
		}
		switch name {
		case "default":
			if len(parts) > 1 {
				return bad("'default' cannot be combined")
			}
		case "disabled":
			p.Disabled = true
		case "threshold":
			fields := strings.Split(arg, ",")
			if arg == "" || len(fields) > 3 {
				return bad("threshold needs 1 to 3 integers: threshold:T0[,T1[,T2]]")
			}
			for _, f := range fields {
				v, err := strconv.Atoi(f)
				if err != nil {
					return bad("threshold value must be an integer, got %q", f)
				}
				if v < 0 {
					return bad("threshold value must be >= 0, got %d", v)
				}
				p.Threshold = append(p.Threshold, v)
			}
		case "freeze":
			p.Freeze = true
		case "manual":
			fields := strings.Split(arg, ":")
			if arg == "" || len(fields) > 2 {
				return bad("manual needs an interval: manual:N[:gen]")
			}
			v, err := strconv.Atoi(fields[0])
			if err != nil {
				return bad("manual interval N must be an integer, got %q", fields[0])
			}
			if v < 1 {
				return bad("manual interval N must be >= 1, got %d", v)
			}
			p.ManualEvery = v
			if len(fields) == 2 {
				g, err := strconv.Atoi(fields[1])
				if err != nil {
					return bad("manual generation must be an integer, got %q", fields[1])
				}
				if g < 0 || g > 2 {
					return bad("manual generation must be in 0..2, got %d", g)
				}
				p.ManualGen = g
			}
		case "collect-every-step":
			p.CollectEveryStep = true
		case "empty-cache-every-step":
			p.EmptyCacheEveryStep = true
		default:
			return bad("unknown part %q (want default, disabled, threshold:T0,T1,T2, freeze, manual:N[:gen], collect-every-step, empty-cache-every-step, joined by +)", part)
		}
	}
	if p.Disabled && (p.Threshold != nil || p.ManualEvery > 0) {
		return bad("'disabled' conflicts with threshold/manual (manual already disables automatic GC)")
	}
	if p.ManualEvery > 0 && (p.Threshold != nil || p.CollectEveryStep) {
		return bad("manual disables automatic GC; it cannot be combined with threshold or collect-every-step")
	}
	return p, nil
}

// Validate checks every field of c the way the worker would.
func (c Config) Validate() error {
	if err := ValidateModel(c.Model); err != nil {
		return err
	}
	if err := ValidateDevice(c.Device); err != nil {
		return err
	}
	if _, err := ParsePolicy(c.Policy); err != nil {
		return err
	}
	return ValidateGarbage(c.Garbage)
}

// ParseCPUList parses a CPU list like "0-3,6" (the kernel's cpuset syntax),
// for pinning workers with -cpus.
func ParseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad CPU list %q (want e.g. 0-3,6)", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("bad CPU list %q (want e.g. 0-3,6)", s)
			}
		}
		if b-a > 4096 {
			return nil, fmt.Errorf("bad CPU list %q: range too large", s)
		}
		for i := a; i <= b; i++ {
			cpus = append(cpus, i)
		}
	}
	return cpus, nil
}
