package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcjitter/gcjitter/internal/cli"
	"github.com/gcjitter/gcjitter/internal/testpython"
	"github.com/gcjitter/gcjitter/results"
)

// TestRunDiskFull: the results directory's disk fills during a run. The
// invocation exits 3 naming the cause and what to do, the runs completed
// before stay in a readable manifest, and compare still reads them.
func TestRunDiskFull(t *testing.T) {
	py := testpython.Torch(t)
	dir := t.TempDir()
	mnt := filepath.Join(dir, "small")
	os.Mkdir(mnt, 0o755)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=640k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v: %s)", err, out)
	}
	defer exec.Command("umount", mnt).Run()
	// About 150 KB of records per run: the first runs fit, a later one does not.
	casePath := filepath.Join(dir, "big.yaml")
	big := "name: big\nworkload: {model: none, work: 10}\ngarbage: {pattern: pairs, cycles: 5}\nsteps: 1200\nwarmup: 0\nruns: 3\nvariants:\n  - policy: default\n  - policy: disabled\n"
	if err := os.WriteFile(casePath, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(mnt, "res")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "-python", py, "-o", out, casePath}, &stdout, &stderr)
	if code != cli.Infra {
		t.Fatalf("exit %d, want %d\nstderr:\n%s", code, cli.Infra, stderr.String())
	}
	msg := stderr.String()
	if !strings.Contains(msg, "no space left on device") || !strings.Contains(msg, "completed runs are kept in "+out) {
		t.Errorf("stderr does not name the cause and what was kept:\n%s", msg)
	}
	m, err := results.ReadManifest(out)
	if err != nil {
		t.Fatalf("manifest after the disk filled: %v", err)
	}
	ok := 0
	for _, r := range m.Runs {
		if r.Status == results.StatusOK {
			ok++
		}
	}
	if ok == 0 || ok == len(m.Runs) {
		t.Fatalf("%d of %d runs ok: the disk should have filled part-way", ok, len(m.Runs))
	}
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"compare", out, out}, &stdout, &stderr); code != cli.OK {
		t.Errorf("compare of the kept runs: exit %d\n%s", code, stderr.String())
	}
}
