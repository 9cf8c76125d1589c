package runner_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/runner"
)

// The workers here are sh scripts, not torch: what is under test is how the
// runner stops a process group that ignores SIGTERM, and that needs no model.

// stubborn writes its meta record, ignores SIGTERM (so only the SIGKILL
// after the grace period can stop it), and leaves a sleeping child in its
// group that has closed the records pipe and stderr: Run does not wait for
// that one, so only the group check shows whether the kill reached it.
const stubborn = `trap '' TERM
echo "{\"type\":\"meta\",\"schema\":1,\"pid\":$$}" >&3
sleep 600 2>&- 3>&- &
`

// fakeWorker writes body as an sh script and returns a worker that runs it.
func fakeWorker(t *testing.T, body string) *runner.Worker {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh:", err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "worker.sh")
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return &runner.Worker{Python: sh, Script: script, RecordsPath: filepath.Join(dir, "records.jsonl")}
}

// checkGoroutines notes how many goroutines run now; the returned func fails
// t if more are left once the test is done. They get a moment to settle:
// a fired timer's callback may still be on its way out.
func checkGoroutines(t *testing.T) func() {
	before := runtime.NumGoroutine()
	return func() {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Second); runtime.NumGoroutine() > before; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("goroutines leaked: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf)
				return
			}
		}
	}
}

// liveInGroup lists the processes of group pgid that have not exited.
// Zombies count as gone: reaping orphans is init's job, not the runner's.
func liveInGroup(pgid int) []int {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return nil
	}
	var live []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 3 || f[0] == "Z" || f[2] != strconv.Itoa(pgid) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		live = append(live, pid)
	}
	return live
}

// checkGroupGone fails t unless every process of group pgid is gone within
// a moment of Run returning (SIGKILL is delivered, not instant).
func checkGroupGone(t *testing.T, pgid int) {
	t.Helper()
	if pgid <= 0 {
		t.Error("no pid to check: the worker's meta record was lost")
		return
	}
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		live := liveInGroup(pgid)
		if len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("process group %d still has live processes %v after Run returned", pgid, live)
			syscall.Kill(-pgid, syscall.SIGKILL)
			return
		}
	}
}

// runWithin runs w, failing t if Run has not returned within limit: a
// missing SIGKILL leaves Run waiting forever on the pipe, and the test
// should say so rather than hang until go test's own timeout.
func runWithin(t *testing.T, w *runner.Worker, limit time.Duration) (*runner.Result, time.Duration, int) {
	t.Helper()
	var pgid atomic.Int64 // read here while Run may still write it
	w.OnRecord = func(r bench.Record) {
		if m, ok := r.(*bench.Meta); ok {
			pgid.Store(int64(m.PID))
		}
	}
	type ret struct {
		res *runner.Result
		err error
	}
	done := make(chan ret, 1)
	start := time.Now()
	go func() {
		res, err := w.Run(context.Background())
		done <- ret{res, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.res, time.Since(start), int(pgid.Load())
	case <-time.After(limit):
		if pid := int(pgid.Load()); pid > 0 {
			syscall.Kill(-pid, syscall.SIGKILL)
		}
		<-done
		t.Fatalf("Run still running %v after start: the worker was never stopped, or ignored SIGTERM and was never SIGKILLed", limit)
	}
	return nil, 0, 0
}

// checkKilledByTimeout: the run was stopped by the named timeout, its
// reason says so, and the worker, which ignores SIGTERM, died by SIGKILL no
// sooner than the timeout plus the grace period (earliest).
func checkKilledByTimeout(t *testing.T, res *runner.Result, which string, took, earliest time.Duration) {
	t.Helper()
	var te *runner.TimeoutError
	if !errors.As(res.Stopped, &te) || te.Which != which {
		t.Errorf("stopped by %v, want the %s timeout", res.Stopped, which)
	}
	if !strings.Contains(res.Reason(), which+" timeout") {
		t.Errorf("reason %q does not name the %s timeout", res.Reason(), which)
	}
	if res.Signal != "SIGKILL" {
		t.Errorf("worker ended by signal %q (exit %d), want SIGKILL", res.Signal, res.ExitCode)
	}
	if took < earliest {
		t.Errorf("killed after %v, before the %s timeout plus the grace period (%v)", took, which, earliest)
	}
}

func TestSIGTERMIgnoredIsKilledAfterGrace(t *testing.T) {
	// Only the leader holds the pipes, as above.
	w := fakeWorker(t, stubborn+"sleep 600 2>&- 3>&-\n")
	w.Silence, w.Grace = 300*time.Millisecond, time.Second
	defer checkGoroutines(t)()
	res, took, pgid := runWithin(t, w, 20*time.Second)

	checkKilledByTimeout(t, res, "silence", took, w.Silence+w.Grace)
	checkGroupGone(t, pgid)
}

func TestTotalTimeoutStopsAWorkerThatKeepsReporting(t *testing.T) {
	// Steps every 50ms keep the silence timeout from ever firing.
	w := fakeWorker(t, stubborn+`i=0
while :; do
	echo "{\"type\":\"step\",\"i\":$i,\"warmup\":false,\"ns\":1000,\"gc\":[],\"count\":[0,0,0]}" >&3
	i=$((i+1))
	sleep 0.05
done
`)
	w.Startup, w.Silence, w.Total, w.Grace = 5*time.Second, 5*time.Second, time.Second, 500*time.Millisecond
	defer checkGoroutines(t)()
	res, took, pgid := runWithin(t, w, 20*time.Second)

	checkKilledByTimeout(t, res, "total", took, w.Total+w.Grace)
	// Steps go on through the grace period; all of them are kept.
	if len(res.Stream.Steps) < 10 || len(reread(t, w.RecordsPath).Steps) != len(res.Stream.Steps) {
		t.Errorf("%d steps in memory, %d on disk; want the same, at least 10", len(res.Stream.Steps), len(reread(t, w.RecordsPath).Steps))
	}
	checkGroupGone(t, pgid)
}

// TestCrashedWorkerLeavesNoProcess: a worker that exits on its own, not
// stopped by the runner, still takes down what it left in its group.
func TestCrashedWorkerLeavesNoProcess(t *testing.T) {
	w := fakeWorker(t, stubborn+"exit 1\n")
	defer checkGoroutines(t)()
	res, _, pgid := runWithin(t, w, 20*time.Second)
	if res.ExitCode != 1 || res.Stopped != nil {
		t.Errorf("exit %d, stopped by %v; want exit 1 on its own", res.ExitCode, res.Stopped)
	}
	checkGroupGone(t, pgid)
}

// TestRunGroupStopsTheOthersWhenARankFails: rank 0 exits with an error while
// rank 1 ignores SIGTERM. Rank 1 must be SIGKILLed, blame rank 0, and leave
// neither a process nor a goroutine behind.
func TestRunGroupStopsTheOthersWhenARankFails(t *testing.T) {
	ready := filepath.Join(t.TempDir(), "ready")
	// Rank 0 fails only once rank 1 has reported its pid.
	r0 := fakeWorker(t, `echo "{\"type\":\"meta\",\"schema\":1,\"pid\":$$}" >&3
while [ ! -e "$READY" ]; do sleep 0.02; done
exit 3
`)
	r1 := fakeWorker(t, stubborn+`: > "$READY"
sleep 600
`)
	var pids [2]atomic.Int64 // read on timeout while RunGroup may still write them
	for i, w := range []*runner.Worker{r0, r1} {
		w.Env = append(os.Environ(), "READY="+ready)
		w.Grace = 500 * time.Millisecond
		w.OnRecord = func(r bench.Record) {
			if m, ok := r.(*bench.Meta); ok {
				pids[i].Store(int64(m.PID))
			}
		}
	}
	defer checkGoroutines(t)()
	type ret struct {
		res []*runner.Result
		err error
	}
	done := make(chan ret, 1)
	go func() {
		res, err := runner.RunGroup(context.Background(), []*runner.Worker{r0, r1})
		done <- ret{res, err}
	}()
	var got ret
	select {
	case got = <-done:
	case <-time.After(20 * time.Second):
		if pid := int(pids[1].Load()); pid > 0 {
			syscall.Kill(-pid, syscall.SIGKILL)
		}
		<-done
		t.Fatal("RunGroup still running 20s after start: SIGKILL after the grace period did not stop the surviving rank")
	}
	if got.err != nil {
		t.Fatal(got.err)
	}
	if res := got.res[0]; res.ExitCode != 3 || res.Stopped != nil {
		t.Errorf("rank 0: exit %d, stopped by %v; want exit 3 on its own", res.ExitCode, res.Stopped)
	}
	res := got.res[1]
	var re *runner.RankError
	if !errors.As(res.Stopped, &re) || re.Rank != 0 || !strings.Contains(re.Reason, "status 3") {
		t.Errorf("rank 1 stopped by %v, want rank 0's failure", res.Stopped)
	}
	if !strings.Contains(res.Reason(), "rank 0 failed") {
		t.Errorf("rank 1's reason %q does not blame rank 0", res.Reason())
	}
	if res.Signal != "SIGKILL" {
		t.Errorf("rank 1 ended by signal %q (exit %d), want SIGKILL", res.Signal, res.ExitCode)
	}
	checkGroupGone(t, int(pids[0].Load()))
	checkGroupGone(t, int(pids[1].Load()))
}
