package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/cases"
	"github.com/gcjitter/gcjitter/internal/testpython"
)

// TestQuickSuiteChecks gates the quick suite, at each case's reduced size
// on real torch, against the baselines committed for the CPU CI host class
// (golden/ci-cpu) and evaluates every case's expectations: each case shows
// the effect it is named after (spikes that are full collections, a
// slowdown from collecting every step, manual schemes collecting only on
// schedule), and the GC schedule matches its baseline exactly. Timings are
// reported, not gated: this machine is shared and noisy.
func TestQuickSuiteChecks(t *testing.T) {
	py := testpython.Torch(t)
	quick, err := cases.Suite("quick")
	if err != nil {
		t.Fatal(err)
	}
	// Gates in lanes. The two cases whose steps are mostly GIL-releasing
	// waits run beside the single-process cases, which keep one core busy:
	// device-bound-periodic-gc (a 190 ms wait a step) one lane per variant,
	// about 47 s each, and device-overlap-gc (an emulated device queue, 55
	// s of which 15 s on a CPU). Then straggler-gc's four ranks, which load
	// both cores, alone. device-bound's expectations held beside a CPU
	// burner at every compute scale (docs/suite.md, "Host speed and load"),
	// device-overlap's have wide margins (hidden steps 218 >= 1, device-util
	// 0.97 >= 0.8), and timings are reported here, not gated.
	type lane struct{ name, filter string }
	idle := []lane{
		{"device-bound-periodic-gc", "^default$"},
		{"device-bound-periodic-gc", "^disabled$"},
		{"device-overlap-gc", ""},
	}
	ranks := "straggler-gc"
	var rest []string
	for _, c := range quick {
		if !slices.ContainsFunc(idle, func(l lane) bool { return l.name == c.Name }) && c.Name != ranks {
			rest = append(rest, c.Name)
		}
	}
	if len(rest) != len(quick)-3 {
		t.Fatalf("the quick suite lacks one of device-bound-periodic-gc, device-overlap-gc or %s: regroup this test's gates", ranks)
	}
	gateArgs := func(out, filter string, names ...string) []string {
		args := []string{"gate", "-python", py, "-reduced", "-runs", "1", "-check", "-census=false",
			"-host-class", "ci-cpu", "-golden", "../../golden", "-timing", "report", "-o", out}
		if filter != "" {
			args = append(args, "-filter", filter)
		}
		return append(args, names...)
	}
	gateOf := func(out, filter string, names ...string) string {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), gateArgs(out, filter, names...), &stdout, &stderr); code != 0 {
			t.Errorf("gate %s %s: exit %d\nstdout:\n%s\nstderr:\n%s", filter, strings.Join(names, " "), code, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	out := filepath.Join(t.TempDir(), "out")
	outOf := map[string]string{}
	idleOut := make([]chan string, len(idle))
	for i, l := range idle {
		dir := filepath.Join(t.TempDir(), l.name)
		outOf[l.name] = dir
		idleOut[i] = make(chan string, 1)
		go func() { idleOut[i] <- gateOf(dir, l.filter, l.name) }()
	}
	var stdout strings.Builder
	stdout.WriteString(gateOf(out, "", rest...))
	for _, c := range idleOut {
		stdout.WriteString(<-c)
	}
	stdout.WriteString(gateOf(filepath.Join(t.TempDir(), "ranks"), "", ranks))
	if t.Failed() {
		t.FailNow()
	}
	for _, c := range quick {
		if len(c.Expect) == 0 {
			t.Errorf("quick case %s has no expectations: what does it show?", c.Name)
			continue
		}
		if c.Reduced == nil {
			t.Errorf("quick case %s declares no reduced size for CI", c.Name)
		}
		if !strings.Contains(stdout.String(), "check "+c.Name+" (on ") {
			t.Errorf("no checks printed for %s", c.Name)
		}
	}
	// One line per gate: a gate of one variant compares 1 of the case's 2.
	if n := strings.Count(stdout.String(), "GC schedule: unchanged in all") + strings.Count(stdout.String(), "GC schedule: unchanged in the 1 of 2 variants compared"); n != len(quick)+1 {
		t.Errorf("%d of %d cases have an unchanged GC schedule (after changing the worker, bench/gcjitter_worker, or a quick case, remake the baselines on a quiet host: scripts/remake-golden.sh):\n%s", n, len(quick), stdout.String())
	}
	if n := strings.Count(stdout.String(), ": ok"); n < 15 {
		t.Errorf("only %d expectations passed:\n%s", n, stdout.String())
	}
	t.Log(stdout.String())

	// The real benchstat reads the device's utilisation from results.bench,
	// higher being better.
	bs := filepath.Join(t.TempDir(), "benchstat")
	if b, err := exec.Command("go", "build", "-o", bs, "golang.org/x/perf/cmd/benchstat").CombinedOutput(); err != nil {
		t.Fatalf("building benchstat: %v\n%s", err, b)
	}
	b, err := exec.Command(bs, "-filter", ".unit:device-util", filepath.Join(outOf["device-overlap-gc"], "results.bench")).CombinedOutput()
	if err != nil || !strings.Contains(string(b), "device-util") || strings.Count(string(b), "case=device-overlap-gc/variant=") != 4 {
		t.Errorf("benchstat on device-util: %v, want one row per device-overlap-gc variant:\n%s", err, b)
	}
	if bench, _ := os.ReadFile(filepath.Join(outOf["device-overlap-gc"], "results.bench")); !strings.Contains(string(bench), "Unit device-util better=higher") {
		t.Errorf("results.bench does not say a higher device-util is better")
	}
}
