package bench_test

import (
	"os/exec"
	"testing"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/internal/testpython"
)

// TestGoAndPythonAgree: the Go validator (used on case files) and the
// worker's own parser accept and reject the same policies, models, devices
// and garbage patterns.
func TestGoAndPythonAgree(t *testing.T) {
	py := testpython.Torch(t)
	script, err := bench.WriteWorker(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	type input struct{ flag, value string }
	var inputs []input
	for _, p := range []string{"default", "disabled", "freeze", "threshold:700", "threshold:700,10,1000",
		"threshold:0,0,0", "manual:1", "manual:100:0", "manual:5:2", "collect-every-step",
		"empty-cache-every-step", "freeze+manual:100", "disabled+freeze", "threshold:1+collect-every-step",
		"", "bogus", "default+freeze", "manual", "manual:0", "manual:x", "manual:10:3", "manual:1:1:1",
		"threshold:", "threshold:1,2,3,4", "threshold:-1", "threshold:a", "freeze:1", "freeze+freeze",
		"disabled+manual:5", "disabled+threshold:5", "manual:5+collect-every-step", "manual:5+threshold:1",
		"Default", "manual:+1", "threshold:1,,2"} {
		inputs = append(inputs, input{"policy", p})
	}
	for _, m := range []string{"mlp", "gpt", "resnet", "none", "bert", "MLP", ""} {
		inputs = append(inputs, input{"model", m})
	}
	for _, d := range []string{"auto", "cpu", "cuda", "cuda:1", "npu:0", "cpu:0", "auto:1", "tpu", "cuda:x", "cuda:-1", ""} {
		inputs = append(inputs, input{"device", d})
	}
	for _, g := range []string{"none", "ring", "pairs+ring+graph+tensor-holders+traceback+logdict", "rings", "ring+", ""} {
		inputs = append(inputs, input{"garbage", g})
	}
	for _, in := range inputs {
		cfg := bench.DefaultConfig()
		switch in.flag {
		case "policy":
			cfg.Policy = in.value
		case "model":
			cfg.Model = in.value
		case "device":
			cfg.Device = in.value
		case "garbage":
			cfg.Garbage = in.value
		}
		goErr := cfg.Validate()
		pyErr := exec.Command(py, script, "--check", "--"+in.flag, in.value).Run()
		if (goErr == nil) != (pyErr == nil) {
			t.Errorf("--%s %q: Go says %v, the worker says %v", in.flag, in.value, goErr, pyErr)
		}
	}
}
