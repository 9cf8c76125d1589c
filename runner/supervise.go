package runner

import (
	"context"
	"io"
	"sync"
	"syscall"
	"time"
)

// supervise bounds a started process group: the returned context ends
// with ctx, when stop is called, or after total (0: no limit); when it
// ends, the group gets SIGTERM, then SIGKILL after grace. done releases
// the supervision once the process has been waited for.
func supervise(ctx context.Context, pid int, grace, total time.Duration) (runCtx context.Context, stop context.CancelCauseFunc, done func()) {
	runCtx, stop = context.WithCancelCause(ctx)
	cancelTotal := context.CancelFunc(func() {})
	if total > 0 {
		runCtx, cancelTotal = context.WithTimeoutCause(runCtx, total, &TimeoutError{"total", total})
	}
	stopKiller := killOnDone(runCtx, pid, grace)
	return runCtx, stop, func() {
		stopKiller()
		cancelTotal()
		stop(nil)
	}
}

// recordWatchdog stops a run whose records stop coming: the first must
// come within startup of the start, each next within silence of the last
// (0: no limit). Safe for several readers (the ranks of a launched group).
type recordWatchdog struct {
	mu      sync.Mutex
	timer   *time.Timer
	heard   bool
	silence time.Duration
	stop    context.CancelCauseFunc
}

func newRecordWatchdog(startup, silence time.Duration, stop context.CancelCauseFunc) *recordWatchdog {
	d := &recordWatchdog{silence: silence, stop: stop}
	if startup > 0 {
		d.timer = time.AfterFunc(startup, func() { stop(&TimeoutError{"startup", startup}) })
	}
	return d
}

// record notes that a record arrived.
func (d *recordWatchdog) record() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.heard {
		if d.timer != nil {
			d.timer.Reset(d.silence)
		}
		return
	}
	d.heard = true
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	if d.silence > 0 {
		d.timer = time.AfterFunc(d.silence, func() { d.stop(&TimeoutError{"silence", d.silence}) })
	}
}

// close disarms the watchdog.
func (d *recordWatchdog) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil {
		d.timer.Stop()
	}
}

// stderrTail is a process's stderr: also to w when set, and always into a
// tail kept for the run's reason.
func stderrTail(w io.Writer) (io.Writer, *tailWriter) {
	tail := &tailWriter{max: 8 << 10}
	if w == nil {
		return tail, tail
	}
	return io.MultiWriter(w, tail), tail
}

// killOnDone signals the process group when ctx ends: SIGTERM, then SIGKILL
// after the grace period (0: DefaultGrace). The returned func stops watching.
func killOnDone(ctx context.Context, pid int, grace time.Duration) func() {
	if grace <= 0 {
		grace = DefaultGrace
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		syscall.Kill(-pid, syscall.SIGTERM)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
		}
		// The leader may have exited while children it started linger in
		// the group: SIGKILL them all either way.
		syscall.Kill(-pid, syscall.SIGKILL)
	}()
	return func() { close(done); wg.Wait() }
}
