// Package testbrowser renders pages in a real headless Chromium for tests:
// the DOM after scripts ran, and a screenshot.
package testbrowser

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/chromedp"
)

// Browser is a headless Chromium with a throwaway profile.
type Browser struct {
	chrome  string
	profile string
	// tmpdir is TMPDIR=<a directory inside the profile>: Chromium's own
	// temporary directories (org.chromium.Chromium.*) go with the profile
	// instead of piling up in /tmp, a few every test run.
	tmpdir string
}

// New finds Chromium: a test without it fails on CI and is skipped
// elsewhere. The profile is removed when the test ends.
func New(t testing.TB) *Browser {
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
	tmp := filepath.Join(profile, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	return &Browser{chrome: chrome, profile: profile, tmpdir: "TMPDIR=" + tmp}
}

func (b *Browser) base() []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-dev-shm-usage", "--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + b.profile}
}

// DOM is the page's DOM after its scripts ran.
func (b *Browser) DOM(page string) ([]byte, error) {
	return b.run(append(b.base(), "--dump-dom", "file://"+page)...)
}

// Screenshot writes a PNG of the page at the given window size.
func (b *Browser) Screenshot(page, png string, width, height int) error {
	_, err := b.run(append(b.base(), fmt.Sprintf("--window-size=%d,%d", width, height), "--screenshot="+png, "file://"+page)...)
	return err
}

// run runs headless Chromium in its own process group, killed with
// everything it started if it has not finished in two minutes: a hung
// browser fails its test, not the whole package at go test's timeout.
func (b *Browser) run(args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.chrome, args...)
	cmd.Env = append(os.Environ(), b.tmpdir)
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

// Tab is a page open in headless Chromium, driven over the DevTools
// protocol (chromedp): what a reader does with a page (load it, drag,
// hover) and what the page then shows.
type Tab struct {
	Ctx context.Context
	mu  sync.Mutex
	// errs are console errors and uncaught exceptions, in order.
	errs []string
}

// Open loads page (a file; "" for none yet, see Navigate) in a new browser
// of its own, with JavaScript on or off, in a window of the given size;
// the browser is closed when the test ends, and given two minutes at most.
func (b *Browser) Open(t testing.TB, page string, scripts bool, width, height int) *Tab {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(b.chrome), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(filepath.Join(b.profile, fmt.Sprintf("tab-%d", time.Now().UnixNano()))), chromedp.WindowSize(width, height),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Env(b.tmpdir))
	deadline, cancelDeadline := context.WithTimeout(context.Background(), 2*time.Minute)
	alloc, cancelAlloc := chromedp.NewExecAllocator(deadline, opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelCtx(); cancelAlloc(); cancelDeadline() })
	tab := &Tab{Ctx: ctx}
	// The first call starts the browser and opens the tab; the console is
	// watched before the page loads.
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
				tab.mu.Lock()
				tab.errs = append(tab.errs, m.String())
				tab.mu.Unlock()
			}
		}
	}()
	if !scripts {
		if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			t.Fatalf("turn scripts off: %v", err)
		}
	}
	if page != "" {
		if err := tab.Navigate(page); err != nil {
			t.Fatal(err)
		}
	}
	return tab
}

// Navigate loads page (a file) and returns when it has loaded.
func (tab *Tab) Navigate(page string) error {
	if err := chromedp.Do(tab.Ctx, chromedp.Navigate("file://"+page)); err != nil {
		return fmt.Errorf("open %s in Chromium: %v", page, err)
	}
	return nil
}

// Errors are the console errors and uncaught exceptions so far.
func (tab *Tab) Errors() []string {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	return slices.Clone(tab.errs)
}

// Eval evaluates a JavaScript expression in the page and decodes its
// value (chromedp.EvalAwaitPromise waits for a promise's).
func Eval[T any](tab *Tab, expr string, opts ...chromedp.EvaluateOption) (T, error) {
	return chromedp.Run(tab.Ctx, chromedp.Evaluate[T](expr, opts...))
}

// Do runs actions in the tab (mouse events, waits).
func (tab *Tab) Do(actions ...chromedp.Action[chromedp.Void]) error {
	return chromedp.Do(tab.Ctx, actions...)
}

// Screenshot writes the whole page as a PNG.
func (tab *Tab) Screenshot(png string) error {
	buf, err := chromedp.Run(tab.Ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return err
	}
	return os.WriteFile(png, buf, 0o644)
}
