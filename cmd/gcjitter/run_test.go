package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/internal/testpython"
	"github.com/gcjitter/gcjitter/results"
)

const threePolicies = `name: e2e
workload: {model: mlp, hidden: 64, batch: 4, threads: 1}
garbage: {pattern: ring+traceback, cycles: 50, objects: 4, long_lived: 20000, retain: 3}
steps: 100
warmup: 3
runs: 3
variants:
  - policy: default
  - policy: disabled
  - policy: manual:25
`

// TestRunEndToEnd: 3 policies x 3 runs x 100 steps on real torch. Every run
// completes, the manifest and every record stream parse, the run order is
// interleaved (not the case's order), and the real benchstat reads the
// benchfmt file without complaint, one row per variant.
func TestRunEndToEnd(t *testing.T) {
	t.Parallel() // files and exit codes, not timings: beside the other such tests, after the serial ones
	py := testpython.Torch(t)
	dir := t.TempDir()
	casePath := filepath.Join(dir, "e2e.yaml")
	if err := os.WriteFile(casePath, []byte(threePolicies), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "-python", py, "-o", out, "-seed", "7", casePath}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr.String())
	}

	m, err := results.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Runs) != 9 {
		t.Fatalf("%d runs in the manifest, want 9", len(m.Runs))
	}
	var order []string
	schedules := map[string][3]int{}
	for _, r := range m.Runs {
		if r.Status != results.StatusOK {
			t.Fatalf("run %s: %s %s", r.ID, r.Status, r.Reason)
		}
		f, err := os.Open(filepath.Join(out, r.Records))
		if err != nil {
			t.Fatal(err)
		}
		s, err := bench.ReadStream(f, r.Records)
		f.Close()
		if err != nil || !s.Complete() || len(s.Measured()) != 100 || len(s.Steps) != 103 {
			t.Fatalf("run %s: stream complete=%v, %d steps, %d measured, err %v", r.ID, s.Complete(), len(s.Steps), len(s.Measured()), err)
		}
		if s.Meta.Policy != r.Policy || s.Meta.HashSeed != itoa(r.HashSeed) {
			t.Errorf("run %s: meta says policy %q hash seed %q, manifest %q %d", r.ID, s.Meta.Policy, s.Meta.HashSeed, r.Policy, r.HashSeed)
		}
		// The GC schedule of a seeded run is the same in every run of a
		// variant, whatever its hash seed.
		n := bench.Collections(s.Measured())
		if prev, ok := schedules[r.Variant]; ok && prev != n {
			t.Errorf("variant %s: collections %v in %s, %v in an earlier run", r.Variant, n, r.ID, prev)
		}
		schedules[r.Variant] = n
		order = append(order, r.Variant)
	}
	caseOrder := strings.Repeat("default disabled manual:25 ", 3)
	if strings.Join(order, " ")+" " == caseOrder {
		t.Errorf("runs ran in the case's order: %v", order)
	}
	for round := range 3 {
		got := map[string]bool{}
		for _, v := range order[3*round : 3*round+3] {
			got[v] = true
		}
		if len(got) != 3 {
			t.Errorf("round %d ran %v: each round runs every variant once", round, order[3*round:3*round+3])
		}
	}
	if schedules["disabled"] != [3]int{} || schedules["manual:25"] != [3]int{0, 0, 4} {
		t.Errorf("schedules %v: disabled must collect nothing, manual:25 exactly 4 full collections", schedules)
	}

	// The real benchstat, from golang.org/x/perf, on our benchfmt file.
	bs := filepath.Join(dir, "benchstat")
	if b, err := exec.Command("go", "build", "-o", bs, "golang.org/x/perf/cmd/benchstat").CombinedOutput(); err != nil {
		t.Fatalf("building benchstat: %v\n%s", err, b)
	}
	cmd := exec.Command(bs, filepath.Join(out, results.BenchFile))
	var bsOut, bsErr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &bsOut, &bsErr
	if err := cmd.Run(); err != nil || bsErr.Len() > 0 {
		t.Fatalf("benchstat: %v\nstderr:\n%s", err, bsErr.String())
	}
	first, _, _ := strings.Cut(bsOut.String(), "\n\n")
	rows := regexp.MustCompile(`(?m)^GCJitter/case=e2e/variant=(\S+) `).FindAllStringSubmatch(first, -1)
	var got []string
	for _, r := range rows {
		got = append(got, r[1])
	}
	slices.Sort(got)
	if strings.Join(got, " ") != "default disabled manual:25" {
		t.Errorf("benchstat's first table has rows %v, want one per variant:\n%s", got, bsOut.String())
	}
	if strings.Contains(bsOut.String(), "syntax") {
		t.Errorf("benchstat reports syntax problems:\n%s", bsOut.String())
	}
}

// A run interrupted in its exit, after its end record, has every step
// measured: it counts (status ok, summarised), the session still ends
// as interrupted (130), and the runs after it are skipped.
func TestRunInterruptedInItsExitKeepsTheRun(t *testing.T) {
	t.Parallel() // files and exit codes, not timings
	py := testpython.Torch(t)
	dir := t.TempDir()
	// The worker holds on after its end record, as a cold interpreter's
	// finalisation does (0.7 s on torch 2.15), here until it is stopped.
	site := filepath.Join(dir, "site")
	os.MkdirAll(site, 0o755)
	os.WriteFile(filepath.Join(site, "sitecustomize.py"), []byte(`import os, time
_write = os.write

def write(fd, data):
    n = _write(fd, data)
    if b'"type": "end"' in data:
        time.sleep(600)
    return n

os.write = write
`), 0o644)
	caseFile := filepath.Join(dir, "held.yaml")
	os.WriteFile(caseFile, []byte(`name: held
workload: {model: mlp, hidden: 32, threads: 1}
steps: 20
warmup: 1
runs: 2
variants:
  - {name: default, policy: default, env: {PYTHONPATH: `+site+`}}
`), 0o644)
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if b, _ := os.ReadFile(filepath.Join(out, "runs", "held", "default", "run-01.jsonl")); bytes.Contains(b, []byte(`"type": "end"`)) {
				cancel()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"run", "-python", py, "-o", out, caseFile}, &stdout, &stderr); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, stderr.String())
	}
	m, err := results.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	var statuses []string
	for _, r := range m.Runs {
		statuses = append(statuses, r.Status)
	}
	if !slices.Equal(statuses, []string{results.StatusOK, results.StatusSkipped}) || !m.Interrupted {
		t.Fatalf("statuses %v (interrupted flag %v), want ok then skipped\n%s", statuses, m.Interrupted, stderr.String())
	}
	if r := m.Runs[0]; r.Summary == nil || r.Steps != 21 {
		t.Errorf("the kept run: %d steps, summary %v; want 21 steps summarised", r.Steps, r.Summary)
	}
}

func itoa(u uint32) string { return strconv.FormatUint(uint64(u), 10) }

// An interrupted run exits 130 (the shell's code for SIGINT), with the
// manifest written and every run accounted for: the one in progress as
// interrupted, the rest as skipped.
func TestRunInterruptedExits130(t *testing.T) {
	t.Parallel() // files and exit codes, not timings: beside the other such tests, after the serial ones
	py := testpython.Torch(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := filepath.Join(t.TempDir(), "out")
	// Cancel once the first run has sent a few steps.
	go func() {
		for ctx.Err() == nil {
			b, _ := os.ReadFile(filepath.Join(out, "runs", "smoke", "default", "run-01.jsonl"))
			b2, _ := os.ReadFile(filepath.Join(out, "runs", "smoke", "disabled", "run-01.jsonl"))
			b3, _ := os.ReadFile(filepath.Join(out, "runs", "smoke", "manual-20", "run-01.jsonl")) // path-safe: cases.PathName
			if bytes.Contains(append(append(b, b2...), b3...), []byte(`"i":3,`)) {
				cancel()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"run", "-python", py, "-o", out, "-runs", "2", "-steps", "100000", "smoke"}, &stdout, &stderr); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, stderr.String())
	}
	m, err := results.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, r := range m.Runs {
		count[r.Status]++
	}
	if count[results.StatusInterrupted] != 1 || count[results.StatusSkipped] != 5 || !m.Interrupted {
		t.Errorf("statuses %v (interrupted flag %v), want 1 interrupted and 5 skipped", count, m.Interrupted)
	}
}
