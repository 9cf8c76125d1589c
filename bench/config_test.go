package bench_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/internal/testpython"
	"github.com/google/go-cmp/cmp"
)

// TestConfigArgsRoundTrip: every flag Args writes is one RegisterFlags
// reads back into the same Config (Go's flag package takes --name too).
func TestConfigArgsRoundTrip(t *testing.T) {
	for _, knobs := range [][2]float64{{0, 0}, {2, 0}, {0, 12.5}, {0.25, 2770}} {
		cfg := bench.DefaultConfig()
		cfg.Model, cfg.Policy, cfg.Garbage, cfg.LongLived, cfg.CPUs = "none", "manual:50", "ring", 1000, "0-1"
		cfg.ComputeScale, cfg.DeviceWaitMS = knobs[0], knobs[1]
		var back bench.Config
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		back.RegisterFlags(fs)
		if err := fs.Parse(cfg.Args()); err != nil {
			t.Fatalf("%v: %v", cfg.Args(), err)
		}
		if diff := cmp.Diff(cfg, back); diff != "" {
			t.Errorf("Args %v read back differently (-want +got):\n%s", cfg.Args(), diff)
		}
	}
}

// TestConfigKnobArgs: unset (0) knobs add no flag, so argument lists made
// before they existed are unchanged; set ones are passed as written.
func TestConfigKnobArgs(t *testing.T) {
	cfg := bench.DefaultConfig()
	for _, a := range cfg.Args() {
		if a == "--compute-scale" || a == "--device-wait-ms" {
			t.Errorf("default Args pass %s: %v", a, cfg.Args())
		}
	}
	cfg.ComputeScale, cfg.DeviceWaitMS = 0.5, 2770
	args := strings.Join(cfg.Args(), " ")
	for _, want := range []string{"--compute-scale 0.5", "--device-wait-ms 2770"} {
		if !strings.Contains(args, want) {
			t.Errorf("Args lack %q: %s", want, args)
		}
	}
}

// TestKnobValidationAgreesWithTheWorker: a value the Go checks accept is
// one the worker accepts, as Args writes it (0 means unset and is not
// passed, so the worker never sees it).
func TestKnobValidationAgreesWithTheWorker(t *testing.T) {
	py := testpython.Torch(t)
	script, err := bench.WriteWorker(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	values := []float64{0, 1, 2, 0.5, 1e-7, 1e6, bench.MaxDeviceWaitMS, bench.MaxDeviceWaitMS + 0.5,
		-1, -1e-9, math.NaN(), math.Inf(1), math.Inf(-1)}
	for _, knob := range []string{"compute-scale", "device-wait-ms"} {
		for _, v := range values {
			cfg := bench.DefaultConfig()
			validate := bench.ValidateComputeScale
			if knob == "compute-scale" {
				cfg.ComputeScale = v
			} else {
				cfg.DeviceWaitMS, validate = v, bench.ValidateDeviceWait
			}
			args := cfg.Args()
			if v == 0 {
				if slices.Contains(args, "--"+knob) {
					t.Errorf("-%s 0 is passed to the worker: %v", knob, args)
				}
				continue
			}
			goErr := validate(v)
			pyErr := exec.Command(py, append([]string{script, "--check"}, args...)...).Run()
			if (goErr == nil) != (pyErr == nil) {
				t.Errorf("--%s %v: Go says %v, the worker says %v", knob, v, goErr, pyErr)
			}
		}
	}
}

func TestMetaReadsKnobs(t *testing.T) {
	var m bench.Meta
	if err := json.Unmarshal([]byte(`{"schema":1,"compute_scale":2.5,"device_wait_ms":2770}`), &m); err != nil {
		t.Fatal(err)
	}
	if m.ComputeScale != 2.5 || m.DeviceWaitMS != 2770 {
		t.Errorf("compute_scale %v, device_wait_ms %v", m.ComputeScale, m.DeviceWaitMS)
	}
	out, err := json.Marshal(bench.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "compute_scale") || strings.Contains(string(out), "device_wait_ms") {
		t.Errorf("unset knobs written: %s", out)
	}
}

// Constants the Go side holds for the worker must be the worker's own:
// the runner reads its exit status for bad input by ExitUsage, and case
// validation caps the emulated device's kernels where the worker does.
func TestConstantsAreTheWorkers(t *testing.T) {
	for _, want := range []string{
		fmt.Sprintf("\nEXIT_USAGE = %d\n", bench.ExitUsage),
		fmt.Sprintf("\nEMU_MAX_KERNELS = %d  #", bench.MaxEmulatedKernels),
	} {
		if !strings.Contains(string(bench.WorkerSource), want) {
			t.Errorf("the worker does not say %q", strings.TrimSpace(want))
		}
	}
}
