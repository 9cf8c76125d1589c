// Package testbrowser renders pages in a real headless Chromium for tests:
// the DOM after scripts ran, and a screenshot.
package testbrowser

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// Browser is a headless Chromium with a throwaway profile.
type Browser struct {
	chrome  string
	profile string
}

// New finds Chromium: a test without it fails on CI and is skipped
// elsewhere. The profile is removed when the test ends.
func New(t *testing.T) *Browser {
	t.Helper()
	chrome, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI needs chromium (Debian: apt-get install chromium; .ci/run installs it)")
		}
		t.Skip("no chromium")
	}
	// The profile lives outside t.TempDir: a crash handler that outlives
	// Chromium by a moment must not fail the test's cleanup.
	profile, err := os.MkdirTemp("", "gcjitter-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(profile) })
	return &Browser{chrome: chrome, profile: profile}
}

func (b *Browser) base() []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-dev-shm-usage", "--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + b.profile}
}

// DOM is the page's DOM after its scripts ran.
func (b *Browser) DOM(page string) ([]byte, error) {
	return run(b.chrome, append(b.base(), "--dump-dom", "file://"+page)...)
}

// Screenshot writes a PNG of the page at the given window size.
func (b *Browser) Screenshot(page, png string, width, height int) error {
	_, err := run(b.chrome, append(b.base(), fmt.Sprintf("--window-size=%d,%d", width, height), "--screenshot="+png, "file://"+page)...)
	return err
}

// run runs headless Chromium in its own process group, killed with
// everything it started if it has not finished in two minutes: a hung
// browser fails its test, not the whole package at go test's timeout.
func run(chrome string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chrome, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("chromium: %v (%v)\n%s", err, ctx.Err(), stderr.String())
	}
	return out, nil
}
