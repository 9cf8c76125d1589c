package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/internal/testpython"
)

// artifactPath is what every CI artifact store and file system accepts
// (actions/upload-artifact refuses ':'; Windows refuses ':' and more).
var artifactPath = regexp.MustCompile(`^[A-Za-z0-9._/-]+$`)

// The documented nightly job, cut short by CI's timeout: scripts/nightly.sh
// passes the signal on, and the gate still writes gate.md and
// gate.junit.xml, marked partial, with every artifact path safe to upload,
// even for a variant named threshold:700,10,1000.
func TestNightlyCutShortLeavesPartialReports(t *testing.T) {
	t.Parallel() // files and exit codes, not timings: beside the other such tests, after the serial ones
	py := testpython.Torch(t)
	if _, err := exec.LookPath("timeout"); err != nil {
		t.Skip("no timeout(1)")
	}
	dir := t.TempDir()
	caseFile := filepath.Join(dir, "long.yaml")
	// Model none: no torch import, so a run's length is its steps'.
	if err := os.WriteFile(caseFile, []byte(`name: long
workload: {model: none, work: 20000}
steps: 6000
warmup: 0
runs: 2
variants:
  - policy: default
  - policy: threshold:700,10,1000
`), 0o644); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join(dir, "golden")
	repo, _ := filepath.Abs("../..")
	bin := filepath.Join(dir, "gcjitter")
	if b, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	// -census=false: the census runs (one more per variant) are not what
	// this test is about.
	update := exec.Command(bin, "golden", "update", "-allow-busy", "-census=false", "-python", py, "-golden", golden, "-host-class", "test-cpu", "-o", filepath.Join(dir, "base"), caseFile)
	if out, err := update.CombinedOutput(); err != nil {
		t.Fatalf("golden update: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "nightly")
	// Cut short in the middle of the gate's four runs (about 6 s each),
	// once gcjitter has said one is done: timeout(1) takes SIGALRM as its
	// time being up (TERM to the script, exit 124), so the cut does not
	// depend on how long the build and the gate's start took (a fixed 12
	// s did).
	cmd := exec.Command("timeout", "-s", "TERM", "-k", "60", "600", filepath.Join(repo, "scripts", "nightly.sh"), "-timing", "report", caseFile)
	cmd.Env = append(os.Environ(), "GCJITTER_PYTHON="+py, "GOLDEN="+golden, "HOST_CLASS=test-cpu", "OUT="+out)
	var msgBuf lockedBuffer
	cmd.Stdout, cmd.Stderr = &msgBuf, &msgBuf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	for deadline := time.Now().Add(3 * time.Minute); !runDone.Match(msgBuf.Bytes()); time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-waited:
			t.Fatalf("nightly.sh ended before a run was done: %v\n%s", err, msgBuf.Bytes())
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-waited
			t.Fatalf("no run of the gate done in 3 minutes\n%s", msgBuf.Bytes())
		}
	}
	cmd.Process.Signal(syscall.SIGALRM)
	err := <-waited
	msg := msgBuf.Bytes()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 124 {
		t.Fatalf("nightly.sh under timeout, its time up: %v, want it cut short (124)\n%s", err, msg)
	}
	for _, f := range []struct{ name, partial string }{
		{"gate.md", "partial: interrupted after "},
		{"gate.junit.xml", `<testsuites name="gcjitter gate (partial)"`},
		{"gate.txt", "partial: interrupted after "},
		{"gate.json", `"partial": "partial: interrupted after `},
		{"gate.html", `<div class="banner undecided partial"><b>partial: interrupted after `},
	} {
		b, err := os.ReadFile(filepath.Join(out, f.name))
		if err != nil {
			t.Fatalf("%s: %v\n%s", f.name, err, msg)
		}
		if !strings.Contains(string(b), f.partial) {
			t.Errorf("%s is not marked partial (%q):\n%s", f.name, f.partial, b)
		}
	}
	n := 0
	filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(out, path)
		if !artifactPath.MatchString(rel) {
			t.Errorf("artifact path %q is not safe to upload", rel)
		}
		n++
		return nil
	})
	if n < 8 {
		t.Errorf("%d paths under %s", n, out)
	}
}

// runDone is gcjitter's line for a run done.
var runDone = regexp.MustCompile(`(?m)^gcjitter: run \d+/\d+ \S+ \([^)]*\): ok`)

// lockedBuffer is a bytes.Buffer that a command's output and a test read
// at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.buf.Bytes())
}
