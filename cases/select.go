package cases

import (
	"cmp"
	"fmt"
	"regexp"

	"github.com/gcjitter/gcjitter/bench"
)

// Selection is what a measuring command runs: the cases named (or a
// suite) and the sizes and settings its flags override.
type Selection struct {
	Suite  string // built-in suite when no case is named
	Filter string // keep only variants whose name matches
	// Runs and Steps override when > 0, Warmup when >= 0.
	Runs, Steps, Warmup int
	Device              string  // overrides every case's device when set
	ComputeScale        float64 // multiplies every case's compute per step (0 or 1: unchanged)
	Reduced             bool    // each case's reduced size first, then the overrides
}

// Load resolves the case arguments (or the suite) and applies the
// selection. Errors are bad input.
func (s Selection) Load(args []string) ([]*Case, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	var cs []*Case
	if len(args) == 0 {
		suite, err := Suite(s.Suite)
		if err != nil {
			return nil, err
		}
		cs = suite
	}
	for _, a := range args {
		c, err := Load(a)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	var re *regexp.Regexp
	if s.Filter != "" {
		re = regexp.MustCompile(s.Filter) // checked by validate
	}
	names := map[string]bool{}
	for _, c := range cs {
		if names[c.Name] {
			return nil, fmt.Errorf("case %q named twice", c.Name)
		}
		names[c.Name] = true
		if err := s.apply(c, re); err != nil {
			return nil, err
		}
	}
	return cs, nil
}

func (s Selection) validate() error {
	if s.Filter != "" {
		if _, err := regexp.Compile(s.Filter); err != nil {
			return fmt.Errorf("-filter: %v", err)
		}
	}
	if s.Device != "" {
		if err := bench.ValidateDevice(s.Device); err != nil {
			return fmt.Errorf("-device: %v", err)
		}
	}
	if err := bench.ValidateComputeScale(s.ComputeScale); err != nil {
		return fmt.Errorf("-compute-scale: %v", err)
	}
	for _, f := range []struct {
		name   string
		v, min int
	}{{"runs", s.Runs, 0}, {"steps", s.Steps, 0}, {"warmup", s.Warmup, -1}} {
		if f.v < f.min {
			return fmt.Errorf("-%s must be >= 0, got %d", f.name, f.v)
		}
	}
	return nil
}

func (s Selection) apply(c *Case, re *regexp.Regexp) error {
	if s.Reduced {
		c.ApplyReduced()
	}
	if s.Runs > 0 {
		c.Runs = s.Runs
	}
	if s.Steps > 0 {
		c.Steps = s.Steps
	}
	if s.Warmup >= 0 {
		c.Warmup = s.Warmup
	}
	if s.Device != "" {
		c.Workload.Device = s.Device
	}
	if s.ComputeScale > 0 && s.ComputeScale != 1 {
		c.Workload.ComputeScale = cmp.Or(c.Workload.ComputeScale, 1) * s.ComputeScale
	}
	if re == nil {
		return nil
	}
	var keep []Variant
	for _, v := range c.Variants {
		if re.MatchString(v.Name) {
			keep = append(keep, v)
		}
	}
	if len(keep) == 0 {
		return fmt.Errorf("-filter %q matches no variant of case %s", s.Filter, c.Name)
	}
	c.Variants = keep
	return nil
}
