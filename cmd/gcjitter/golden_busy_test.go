package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/golden"
	"github.com/gcjitter/gcjitter/results"
)

// TestGoldenUpdateRefusesBusyHost: a CPU burner beside golden update for
// the whole session slows every run alike, so the runs agree with each
// other; the other load each run recorded still refuses the baseline (exit
// 3, after running the cases once more), and -allow-busy writes it with
// the load in its provenance. (On the side of a quiet host: this package's
// scripts run side by side, so a quiet reading cannot be promised here;
// the limit itself is tested in golden.)
func TestGoldenUpdateRefusesBusyHost(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the worker beside a CPU burner")
	}
	dir := t.TempDir()
	caseFile := filepath.Join(dir, "busy.yaml")
	os.WriteFile(caseFile, []byte(`name: busy
workload: {model: none, work: 20000}
garbage: {pattern: ring, cycles: 20, objects: 4}
steps: 400
warmup: 2
runs: 1
variants:
  - policy: default
  - policy: disabled
`), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	burner := exec.CommandContext(ctx, "sh", "-c", "while :; do :; done")
	if err := burner.Start(); err != nil {
		t.Fatal(err)
	}
	defer burner.Wait()
	defer cancel()
	g := filepath.Join(dir, "golden")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"golden", "update", "-golden", g, "-host-class", "t-cpu", "-o", filepath.Join(dir, "r1"), caseFile}, &stdout, &stderr)
	if code != 3 {
		t.Fatalf("beside a burner: exit %d, want 3\n%s%s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{"the host was busy while these runs ran", "run busy/default/run-01: other processes kept ", "-allow-busy", "running busy once more"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if _, err := os.Stat(golden.Path(g, "t-cpu", "busy")); err == nil {
		t.Errorf("a baseline was written beside a burner")
	}
	m, err := results.ReadManifest(filepath.Join(dir, "r1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range m.Runs {
		if r.OtherCPUs == nil || *r.OtherCPUs < results.BusyLimit(m.Host.CPUs) {
			t.Errorf("run %s recorded other load %v beside a burner, want over %.2f CPUs", r.ID, r.OtherCPUs, results.BusyLimit(m.Host.CPUs))
		}
	}

	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"golden", "update", "-allow-busy", "-golden", g, "-host-class", "t-cpu", "-o", filepath.Join(dir, "r2"), caseFile}, &stdout, &stderr); code != 0 {
		t.Fatalf("-allow-busy: exit %d\n%s", code, stderr.String())
	}
	b, err := os.ReadFile(golden.Path(g, "t-cpu", "busy"))
	if err != nil {
		t.Fatal(err)
	}
	var written struct {
		Provenance struct {
			OtherCPUs *float64 `json:"other_cpus_max"`
		} `json:"provenance"`
	}
	if err := json.Unmarshal(b, &written); err != nil || written.Provenance.OtherCPUs == nil || *written.Provenance.OtherCPUs < results.BusyLimit(m.Host.CPUs) {
		t.Errorf("the baseline written with -allow-busy records other load %v CPUs (%v), want over %.2f", written.Provenance.OtherCPUs, err, results.BusyLimit(m.Host.CPUs))
	}
}
