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
	t.Parallel() // files and exit codes, not timings: beside the other such tests, after the serial ones
	py := testpython.Torch(t)
	dir := t.TempDir()
	mnt := filepath.Join(dir, "small")
	os.Mkdir(mnt, 0o755)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=640k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v: %s)", err, out)
	}
	defer exec.Command("umount", mnt).Run()
	// A plan whose streams cannot fit (by runner.BytesPerStep) is refused
	// before any run: exit 2, nothing written.
	casePath := filepath.Join(dir, "long.yaml")
	long := "name: long\nworkload: {model: none, work: 10}\nsteps: 5000\nwarmup: 0\nruns: 3\nvariants:\n  - policy: default\n  - policy: disabled\n"
	if err := os.WriteFile(casePath, []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"run", "-python", py, "-o", filepath.Join(mnt, "refused"), casePath}, &stdout, &stderr); code != cli.Usage ||
		!strings.Contains(stderr.String(), "not enough free disk for the record streams") || !strings.Contains(stderr.String(), "nothing was run") {
		t.Errorf("exit %d, want %d and the free-disk refusal\nstderr:\n%s", code, cli.Usage, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(mnt, "refused")); err == nil {
		t.Errorf("the refused plan left a results directory")
	}
	stdout.Reset()
	stderr.Reset()

	// A plan that fits by the estimate but writes more (about 2 KB of GC
	// events per step, twice runner.BytesPerStep): the disk fills part-way,
	// the first runs are kept.
	casePath = filepath.Join(dir, "big.yaml")
	big := "name: big\nworkload: {model: none, work: 10}\ngarbage: {pattern: pairs, cycles: 8000}\nsteps: 100\nwarmup: 0\nruns: 3\nvariants:\n  - policy: default\n  - policy: disabled\n"
	if err := os.WriteFile(casePath, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(mnt, "res")
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
