package golden

import (
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/results"
)

const sample = `{
  "schema": 1,
  "case": "tiny",
  "host_class": "test-cpu",
  "provenance": {"tool": "t", "date": "d", "host": "h", "results": "r"},
  "env": {"python": "3.11.2", "python_build": "b", "torch": "1.13.0", "device": "cpu"},
  "size": {"steps": 40, "warmup": 2, "runs": 1, "spike_factor": 1.5},
  "variants": [
    {
      "name": "default",
      "policy": "default",
      "schedule": {"collections": [11, 1, 0], "collected": [1700, 6100, 0]},
      "runs": [{"p50": 1000, "gen0-collections": 275}]
    }
  ]
}
`

func TestParseReportsFileAndLine(t *testing.T) {
	if _, err := Parse([]byte(sample), "g.json"); err != nil {
		t.Fatalf("the sample does not parse: %v", err)
	}
	for _, c := range []struct{ from, to, want string }{
		{`"steps": 40`, `"steps": "forty"`, "g.json:7: not a valid baseline: size.steps should be int, not string"},
		{`"collections": [11, 1, 0]`, `"collections": [11, 1, -3]`, "g.json:10: variant default: negative count in its schedule"},
		{`"schema": 1`, `"schema": 7`, "g.json:2: baseline schema 7, this gcjitter reads 1"},
		{`"policy": "default",`, `"policy": "default", "extra": 1,`, `g.json:11: not a valid baseline: json: unknown field "extra"`},
		{`"device": "cpu"`, `"device": ""`, "g.json:6: no device in the environment"},
		{`"host_class": "test-cpu"`, `"host_class": "../x"`, `g.json:4: host class "../x"`},
		{`"host_class": "test-cpu"`, `"host_class": "test\u0000cpu"`, `g.json:4: host class "test\x00cpu"`},
		{`"host_class": "test-cpu"`, `"host_class": "test\ncpu"`, `g.json:4: host class "test\ncpu"`},
		{"  ]\n}\n", "  ]\n", "g.json:16: not a valid baseline: unexpected EOF"},
	} {
		in := strings.Replace(sample, c.from, c.to, 1)
		if in == sample {
			t.Fatalf("edit %q not applied", c.from)
		}
		_, err := Parse([]byte(in), "g.json")
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s -> %s:\n got: %v\nwant: %s...", c.from, c.to, err, c.want)
		}
	}
}

func TestHostClass(t *testing.T) {
	t.Setenv(results.HostClassEnv, "")
	for _, c := range []struct {
		host results.Host
		want string
	}{
		{results.Host{CPUModel: "AMD EPYC 7B13 64-Core Processor"}, "cpu-amd-epyc-7b13-64-core-processor"},
		{results.Host{CPUModel: "Intel(R) Xeon(R) Platinum 8480+", GPUs: []string{"NVIDIA H200, 1980 MHz, 1980 MHz, 3201 MHz, 570.1"}}, "cuda-nvidia-h200"},
		{results.Host{GPUs: []string{"npu-smi: | npu-smi 23.0.0 | Version: 23.0.0 | 0 910B3 | OK"}}, "npu-910b3"},
		{results.Host{}, "cpu-unknown"},
	} {
		got, err := HostClass("", c.host)
		if err != nil || got != c.want {
			t.Errorf("HostClass(%+v) = %q, %v; want %q", c.host, got, err, c.want)
		}
	}
	if got, _ := HostClass("my-ci", results.Host{CPUModel: "x"}); got != "my-ci" {
		t.Errorf("the flag did not win: %q", got)
	}
	t.Setenv(results.HostClassEnv, "from-env")
	if got, _ := HostClass("", results.Host{CPUModel: "x"}); got != "from-env" {
		t.Errorf("$%s did not win: %q", results.HostClassEnv, got)
	}
	for _, bad := range []string{"Bad/Class", "cpu\x00x", "cpu\nx"} {
		if _, err := HostClass(bad, results.Host{}); err == nil {
			t.Errorf("host class %q was accepted", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(sample)
	f.Add("{}")
	f.Fuzz(func(t *testing.T, data string) {
		g, err := Parse([]byte(data), "fuzz.json")
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if g.Size.Steps < 1 || len(g.Variants) == 0 || ValidHostClass(g.HostClass) != nil {
			t.Fatalf("accepted an invalid baseline: %+v", g)
		}
	})
}

// A case name from a results manifest becomes a file name: one that would
// leave the golden directory is refused before anything is written.
func TestFromResultsRefusesEscapingCaseNames(t *testing.T) {
	for _, name := range []string{"../x", "a/b", "x\x00y", ""} {
		m := &results.Manifest{Cases: []results.Case{{Name: name}}}
		_, err := FromResults(m, "res", name, "test-cpu")
		if err == nil || !strings.Contains(err.Error(), "not a valid case name") {
			t.Errorf("case %q: err %v, want a refusal", name, err)
		}
	}
}
