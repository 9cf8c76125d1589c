package cases

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/stats"
	"github.com/google/go-cmp/cmp"
)

const good = `name: t
workload: {model: gpt, hidden: 64, heads: 4}
garbage: {pattern: ring+traceback, cycles: 10, long_lived: 1000}
steps: 50
runs: 2
variants:
  - policy: default
  - {name: megatron, policy: "manual:10", env: {FOO: bar}}
timeouts: {silence: 30s}
gate:
  floors: {p99: 7.5%, p50: 0.02}
`

func TestParseGood(t *testing.T) {
	c, err := Parse([]byte(good), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{c.Variants[0].Name, c.Variants[1].Name}; !cmp.Equal(got, []string{"default", "megatron"}) {
		t.Errorf("variant names %v", got)
	}
	if c.Runs != 2 || c.Warmup != 10 || c.Ranks != 1 || c.Seed != 1 {
		t.Errorf("sizes: runs %d warmup %d ranks %d seed %d", c.Runs, c.Warmup, c.Ranks, c.Seed)
	}
	if time.Duration(c.Timeouts.Silence) != 30*time.Second || time.Duration(c.Timeouts.Startup) != DefaultStartup {
		t.Errorf("timeouts %+v", c.Timeouts)
	}
	if c.Gate.Floor("p99") != 0.075 || c.Gate.Floor("p50") != 0.02 || c.Gate.Floor("max") != Fraction(stats.DefaultFloors["max"]) {
		t.Errorf("floors: p99 %v p50 %v max %v", c.Gate.Floor("p99"), c.Gate.Floor("p50"), c.Gate.Floor("max"))
	}
	cfg := c.WorkerConfig(c.Variants[1])
	want := []string{"--model", "gpt", "--policy", "manual:10", "--hidden", "64", "--garbage", "ring+traceback", "--long-lived", "1000", "--steps", "50"}
	args := strings.Join(cfg.Args(), " ")
	for i := 0; i < len(want); i += 2 {
		if !strings.Contains(args, want[i]+" "+want[i+1]) {
			t.Errorf("worker args lack %s %s: %s", want[i], want[i+1], args)
		}
	}
}

func TestParseBad(t *testing.T) {
	for _, c := range []struct{ name, edit, want string }{
		{"unknown key", "steps: 50\n", "steps: 50\nstpes: 3\n"},
		{"unknown nested key", "garbage: {pattern: ring+traceback, cycles: 10, long_lived: 1000}", "garbage: {pattern: ring+traceback, cycles: 10, long_lived: 1000, lifetime: 3}"},
		{"wrong type", "steps: 50", "steps: fifty"},
		{"out of range", "runs: 2", "runs: 0"},
		{"bad policy", `policy: "manual:10"`, `policy: "manual:0"`},
		{"bad model", "model: gpt", "model: bert"},
		{"bad pattern", "pattern: ring+traceback", "pattern: ring+tracebacks"},
		{"bad duration", "silence: 30s", "silence: soon"},
		{"bad floor metric", "p99: 7.5%", "p98: 7.5%"},
		{"bad floor value", "p99: 7.5%", "p99: lots"},
		{"infinite floor", "p99: 7.5%", "p99: inf"},
		{"NaN floor", "p99: 7.5%", "p99: NaN%"},
		{"duplicate variant", "name: megatron, ", "name: default, "},
		{"escaping variant name", "name: megatron, ", "name: ../../etc, "},
		{"escaping case name", "name: t\n", "name: ../t\n"},
		{"NUL in variant name", "name: megatron, ", `name: "mega\0tron", `},
		{"newline in variant name", "name: megatron, ", `name: "mega\ntron", `},
		{"NUL in case name", "name: t\n", `name: "t\0"` + "\n"},
		{"newline in case name", "name: t\n", `name: "t\nx"` + "\n"},
		{"managed env", "FOO: bar", "PYTHONHASHSEED: '1'"},
		{"too many ranks", "runs: 2", "runs: 2\nranks: 65"},
		{"duplicate key", "runs: 2", "runs: 2\nruns: 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(good, c.edit) {
				t.Fatalf("edit %q not in the good file", c.edit)
			}
			_, err := Parse([]byte(strings.Replace(good, c.edit, c.want, 1)), "bad.yaml")
			if err == nil {
				t.Fatal("accepted")
			}
			t.Log(err)
			errs, ok := err.(Errors)
			if !ok || len(errs) == 0 || errs[0].Line == 0 || errs[0].File != "bad.yaml" {
				t.Fatalf("want Errors with file and line, got %T %v", err, err)
			}
		})
	}
}

// The exact messages users see, line numbers included.
func TestParseMessages(t *testing.T) {
	for _, c := range []struct{ edit, repl, want string }{
		{"steps: 50\n", "steps: 50\nstpes: 3\n", `bad.yaml:5: unknown key "stpes" in the case`},
		{"steps: 50", "steps: fifty", `bad.yaml:4: wrong type: "fifty" is a string, want an integer`},
		{"runs: 2", "runs: 0", "bad.yaml:5: runs: must be >= 1, got 0"},
		{`policy: "manual:10"`, `policy: "manual:0"`, `bad.yaml:8: variants[1].policy: policy "manual:0": manual interval N must be >= 1, got 0`},
		{"model: gpt", "model: bert", `bad.yaml:2: workload.model: unknown model "bert" (want mlp, gpt, resnet, none)`},
		{"silence: 30s", "silence: soon", `bad.yaml:9: "soon" is not a duration (want e.g. 90s, 10m, 1h)`},
		{"p99: 7.5%", "p98: 7.5%", `bad.yaml:11: gate.floors: unknown metric "p98"`},
		{"runs: 2", "runs: 2\nruns: 3", `bad.yaml:6: mapping key "runs" already defined at line 5`},
		// Names become file names: a NUL or a newline is refused by name, not
		// left to fail (or worse) when a file is made.
		{"name: t\n", `name: "t\0"` + "\n", `bad.yaml:1: name: "t\x00" is not a valid case name`},
		{"name: t\n", `name: "t\nx"` + "\n", `bad.yaml:1: name: "t\nx" is not a valid case name`},
		{"name: megatron, ", `name: "mega\0tron", `, `bad.yaml:8: variants[1].name: "mega\x00tron" is not a valid variant name`},
		{"name: megatron, ", `name: "mega\ntron", `, `bad.yaml:8: variants[1].name: "mega\ntron" is not a valid variant name`},
		{"runs: 2", "runs: 2\nranks: 2\nlauncher: mpirun", `bad.yaml:7: launcher: want local or torchrun, got "mpirun"`},
		{"runs: 2", "runs: 2\nlauncher: torchrun", "bad.yaml:6: launcher: torchrun starts several ranks; set ranks: 2 or more"},
		{"runs: 2", "runs: 2\nlauncher_command: [torchrun]", "bad.yaml:6: launcher_command: only with launcher: torchrun"},
		{"heads: 4}", "heads: 4, compute_scale: -1}", "bad.yaml:2: workload.compute_scale: must be a finite number >= 0 (0 means 1), got -1"},
		{"heads: 4}", "heads: 4, device_wait_ms: -0.5}", "bad.yaml:2: workload.device_wait_ms: must be in 0..3600000 (milliseconds), got -0.5"},
		{"heads: 4}", "heads: 4, compute_scal: 2}", `bad.yaml:2: unknown key "compute_scal" in workload (known: model, device, batch, hidden, layers, heads, seq, vocab, image, work, threads, compute_scale, device_wait_ms, emulated_device)`},
	} {
		_, err := Parse([]byte(strings.Replace(good, c.edit, c.repl, 1)), "bad.yaml")
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q -> %q:\n got: %v\nwant: %s...", c.edit, c.repl, err, c.want)
		}
	}
}

// The workload's compute_scale and device_wait_ms reach the worker's
// flags; unset, they add none.
func TestWorkloadKnobs(t *testing.T) {
	const file = `name: t
workload:
  model: none
  compute_scale: 2
  device_wait_ms: 12.5
variants: [{policy: default}]
`
	c, err := Parse([]byte(file), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(c.WorkerConfig(c.Variants[0]).Args(), " ")
	for _, want := range []string{"--compute-scale 2", "--device-wait-ms 12.5"} {
		if !strings.Contains(args, want) {
			t.Errorf("worker args lack %q: %s", want, args)
		}
	}
	c, err = Parse([]byte(good), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(c.WorkerConfig(c.Variants[0]).Args(), " "); strings.Contains(args, "--compute-scale") || strings.Contains(args, "--device-wait-ms") {
		t.Errorf("unset knobs passed: %s", args)
	}
	// Out of range: an error naming the file and the key's own line.
	for _, bad := range []struct{ edit, repl, want string }{
		{"compute_scale: 2", "compute_scale: -2", "bad.yaml:4: workload.compute_scale: must be a finite number >= 0 (0 means 1), got -2"},
		{"compute_scale: 2", "compute_scale: .nan", "bad.yaml:4: workload.compute_scale: must be a finite number >= 0 (0 means 1), got NaN"},
		{"compute_scale: 2", "compute_scale: .inf", "bad.yaml:4: workload.compute_scale: must be a finite number >= 0 (0 means 1), got +Inf"},
		{"device_wait_ms: 12.5", "device_wait_ms: -1", "bad.yaml:5: workload.device_wait_ms: must be in 0..3600000 (milliseconds), got -1"},
		{"device_wait_ms: 12.5", "device_wait_ms: 4e6", "bad.yaml:5: workload.device_wait_ms: must be in 0..3600000 (milliseconds), got 4e+06"},
		{"device_wait_ms: 12.5", "device_wait_ms: soon", `bad.yaml:5: wrong type: "soon" is a string, want a number`},
	} {
		_, err := Parse([]byte(strings.Replace(file, bad.edit, bad.repl, 1)), "bad.yaml")
		if err == nil || err.Error() != bad.want {
			t.Errorf("%s:\n got: %v\nwant: %s", bad.repl, err, bad.want)
		}
	}
	// 0 is the default, not an error.
	if _, err := Parse([]byte(strings.Replace(file, "compute_scale: 2", "compute_scale: 0", 1)), "t.yaml"); err != nil {
		t.Errorf("compute_scale: 0: %v", err)
	}
}

func TestBuiltinCasesAreValid(t *testing.T) {
	all, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	quick, err := Suite("quick")
	if err != nil || len(quick) == 0 {
		t.Fatalf("quick suite: %v", err)
	}
	for _, c := range all {
		if strings.TrimSpace(c.Description) == "" {
			t.Errorf("%s: no description: each case tells its story", c.Name)
		}
		if "builtin:"+c.Name != c.Source {
			t.Errorf("case %q lives in %s: file name and case name must match", c.Name, c.Source)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(good)
	f.Add("name: x\nvariants: [{policy: default}]\n")
	f.Add("- a\n- b\n")
	f.Fuzz(func(t *testing.T, data string) {
		c, err := Parse([]byte(data), "fuzz.yaml")
		if err != nil {
			if _, ok := err.(Errors); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if len(c.Variants) == 0 || c.Runs < 1 || c.Steps < 1 || !caseNameRE.MatchString(c.Name) {
			t.Fatalf("accepted an invalid case: %+v", c)
		}
	})
}

func TestExpectErrors(t *testing.T) {
	base := good + "expect:\n"
	for _, c := range []struct{ line, want string }{
		{"  - {variant: default, metric: p51, min: 1}", `bad.yaml:13: expect[0]: metric: unknown quantity "p51"`},
		{"  - {variant: nosuch, metric: p50, min: 1}", `bad.yaml:13: expect[0]: variant "nosuch" is not one of the case's variants`},
		{"  - {variant: default, metric: p50}", "bad.yaml:13: expect[0]: says nothing to check: give min, max, below or above"},
		{"  - {variant: default, metric: p50, ratio_to: megatron}", "bad.yaml:13: expect[0]: ratio_to needs min or max"},
		{"  - {variant: default, metric: p50, below: default}", "bad.yaml:13: expect[0]: below: a variant compared with itself"},
		{"  - {variant: default, metric: p50, min: 2, max: 1}", "bad.yaml:13: expect[0]: min 2 is above max 1"},
		{"  - {variant: default, metric: p50, min: lots}", `bad.yaml:13: wrong type: "lots" is a string, want a number`},
		{"  - {variant: default, metric: p50, mni: 1}", `bad.yaml:13: unknown key "mni" in an expectation`},
	} {
		_, err := Parse([]byte(base+c.line+"\n"), "bad.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got: %v\nwant: %s...", c.line, err, c.want)
		}
	}
}

func TestCheck(t *testing.T) {
	c, err := Parse([]byte(good+`expect:
  - {variant: default, metric: gen2-spike-share, min: 0.8}
  - {variant: megatron, metric: unscheduled-collections, max: 0}
  - {variant: megatron, metric: p50, ratio_to: default, min: 1.5}
  - {variant: megatron, metric: gen2-collections, below: default}
  - {variant: default, metric: p50, max: 1, device: cuda}
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string][]stats.RunSummary{
		"default":  {{Steps: 1000, P50: 10e6, Spikes: 10, SpikesWithGen2: 9, Collections: [3]int{100, 10, 5}}},
		"megatron": {{Steps: 1000, P50: 14e6, Unscheduled: 1, Collections: [3]int{0, 0, 10}}},
	}
	var got []bool
	for _, o := range c.Check(runs, "cpu") {
		got = append(got, o.OK)
		t.Log(o.Text)
	}
	// spike share 0.9 ok; one unscheduled collection fails; ratio 1.4 < 1.5
	// fails; 10 gen-2 is not below 5; the cuda-only one is skipped.
	if diff := cmp.Diff([]bool{true, false, false, false, true}, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
}

// TestCheckSkipsFilteredVariants: -filter drops variants, not expectations;
// one that needs a dropped variant is skipped and says why, while a
// variant that was kept but has no completed run still fails.
func TestCheckSkipsFilteredVariants(t *testing.T) {
	c, err := Parse([]byte(good+`expect:
  - {variant: default, metric: gen2-spike-share, min: 0.8}
  - {variant: megatron, metric: unscheduled-collections, max: 0}
  - {variant: megatron, metric: p50, ratio_to: default, min: 1.5}
  - {variant: default, metric: gen2-collections, above: megatron}
  - {variant: default, metric: p50, ratio_to: megatron, min: 0.5}
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := (Selection{Filter: "^default$", Warmup: -1}).apply(c, regexp.MustCompile("^default$")); err != nil {
		t.Fatal(err)
	}
	runs := map[string][]stats.RunSummary{
		"default": {{Steps: 1000, P50: 10e6, Spikes: 10, SpikesWithGen2: 9, Collections: [3]int{100, 10, 5}}},
	}
	var got []string
	for _, o := range c.Check(runs, "cpu") {
		got = append(got, fmt.Sprintf("ok=%v skipped=%v", o.OK, o.Skipped))
		if o.Skipped && !strings.Contains(o.Text, "variant megatron was not run: -filter left it out") {
			t.Errorf("skipped without saying why: %s", o.Text)
		}
	}
	want := []string{"ok=true skipped=false", "ok=true skipped=true", "ok=true skipped=true", "ok=true skipped=true", "ok=true skipped=true"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	// The kept variant without a completed run (it crashed) fails.
	failed := 0
	for _, o := range c.Check(map[string][]stats.RunSummary{}, "cpu") {
		if o.OK && !o.Skipped {
			t.Errorf("an expectation on a variant without runs passed: %s", o.Text)
		}
		if !o.OK {
			failed++
		}
	}
	if failed == 0 {
		t.Errorf("no expectation failed on a kept variant without runs")
	}
}
