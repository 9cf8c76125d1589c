package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/bench"
)

// A rank killed after a step and a peer whose all-reduce then failed stop in
// one tick of the file clock: the silent one is blamed, whatever its number.
func TestFirstStoppedTie(t *testing.T) {
	tick := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	failedWith := func(err *bench.ErrorRecord) *Result {
		return &Result{Stream: &bench.Stream{Error: err}} // no end record: failed
	}
	peerFailed := &bench.ErrorRecord{Kind: "runtime", Message: "RuntimeError: Connection closed by peer"}
	for _, tc := range []struct {
		name string
		out  []*Result
		at   []time.Time
		want int
	}{
		{"tie: the silent rank", []*Result{failedWith(peerFailed), failedWith(nil)}, []time.Time{tick, tick}, 1},
		{"tie, both silent: the lower rank", []*Result{failedWith(nil), failedWith(nil)}, []time.Time{tick, tick}, 0},
		{"earlier wins over silence", []*Result{failedWith(peerFailed), failedWith(nil)}, []time.Time{tick, tick.Add(time.Millisecond)}, 0},
		{"no stream file", []*Result{failedWith(nil), failedWith(peerFailed)}, []time.Time{{}, tick}, 1},
	} {
		if got := firstStopped(tc.out, tc.at); got != tc.want {
			t.Errorf("%s: blamed rank %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestLaunchedBlamesTheRankThatDiedFirst: ranks in one collective write
// their last records in either order. Here rank 0 writes first and waits,
// as in an all-reduce; rank 1 writes later, then dies; the launcher then
// stops rank 0. Rank 1 is blamed: its exit came first, though its stream's
// last write came second (launcher_torchrun.txtar blamed rank 0 so once).
// Rank 1 dies only once both ranks' exits are watched: a rank that dies
// before its meta record is read is ordered by its stream's last write.
// The launcher stops rank 0 0.2 s after (torchrun's monitor, looking every
// 100 ms, stops the others 0-100 ms after): exits nearer than a loaded
// host's scheduling delay are timed as the watchers wake, in either order
// (this test, with no pause, failed in CI and beside three busy loops).
func TestLaunchedBlamesTheRankThatDiedFirst(t *testing.T) {
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "run.rank{rank}.jsonl")
	watched := filepath.Join(dir, "watched")
	meta := `echo "{\"type\":\"meta\",\"schema\":1,\"pid\":$$}" >> "$0"`
	launcher := `for a; do tmpl=$a; done
sh -c '` + meta + `; exec sleep 600' "$(echo "$tmpl" | sed s/{rank}/0/)" & r0=$!
sh -c 'sleep 0.3; ` + meta + `; while [ ! -e "$1" ]; do sleep 0.05; done; kill -9 $$' "$(echo "$tmpl" | sed s/{rank}/1/)" "` + watched + `" & r1=$!
wait $r1; sleep 0.2; kill $r0; wait $r0; exit 1`
	var metas atomic.Int32
	g := &Launched{
		// Called after the record's exit watch is set up.
		OnRecord: func(rank int, rec bench.Record) {
			if _, ok := rec.(*bench.Meta); ok && metas.Add(1) == 2 {
				os.WriteFile(watched, nil, 0o644)
			}
		},
		Command:      []string{"sh", "-c", launcher, "launcher"},
		Script:       "worker.pyz",
		Template:     tmpl,
		RecordsPaths: []string{strings.ReplaceAll(tmpl, "{rank}", "0"), strings.ReplaceAll(tmpl, "{rank}", "1")},
		Stdout:       io.Discard,
		Stderr:       io.Discard,
		Grace:        time.Second,
	}
	out, err := g.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !out[0].Failed() || !out[1].Failed() {
		t.Fatalf("failed: rank 0 %v, rank 1 %v; want both", out[0].Failed(), out[1].Failed())
	}
	if !out[1].StoppedGroup || out[0].StoppedGroup {
		t.Errorf("StoppedGroup: rank 0 %v, rank 1 %v; want only rank 1", out[0].StoppedGroup, out[1].StoppedGroup)
	}
}

func TestDescendsFrom(t *testing.T) {
	if !descendsFrom(os.Getpid(), os.Getppid()) {
		t.Errorf("this test does not descend from its parent %d", os.Getppid())
	}
	if descendsFrom(os.Getppid(), os.Getpid()) {
		t.Errorf("this test's parent descends from it")
	}
	if descendsFrom(1<<22+7, os.Getpid()) {
		t.Errorf("a pid that does not exist descends from this test")
	}
	// A process's exit is watched only under the launcher named.
	for _, tc := range []struct {
		launcher int
		timed    bool
	}{{os.Getpid(), true}, {1<<22 + 7, false}} {
		child := exec.Command("sleep", "0.1")
		if err := child.Start(); err != nil {
			t.Fatal(err)
		}
		over := make(chan struct{})
		w := watchExit(child.Process.Pid, tc.launcher, over)
		child.Wait()
		close(over)
		if at, _ := w.exitedAt(); !at.IsZero() != tc.timed {
			t.Errorf("under launcher %d: exit timed %v, want %v", tc.launcher, !at.IsZero(), tc.timed)
		}
	}
}

// TestWatchExitOfAnEndedProcess: a rank that ended before its meta record
// was read has a bound, the time of the look, not an exit time; it orders
// the ranks only where it comes before every other failed rank's exit (the
// look would otherwise put it after ranks that ended before it), and
// otherwise the streams' last writes do.
func TestWatchExitOfAnEndedProcess(t *testing.T) {
	child := exec.Command("true")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Wait()
	pid := child.Process.Pid
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		f := procStat(pid)
		if f == nil {
			t.Fatal("the child is gone from /proc")
		}
		if f[0] == "Z" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child never turned zombie")
		}
	}
	over := make(chan struct{})
	close(over)
	before := time.Now()
	ended := watchExit(pid, os.Getpid(), over)
	if at, bound := ended.exitedAt(); !bound || at.Before(before) {
		t.Fatalf("a process that had ended when watched: exit %v, bound %v; want the time of the look, as a bound", at, bound)
	}

	dir := t.TempDir()
	paths := []string{filepath.Join(dir, "r0"), filepath.Join(dir, "r1")}
	writtenLast := func(k int) {
		at := time.Date(2026, 12, 8, 1, 0, 0, 0, time.UTC)
		for j, p := range paths {
			os.WriteFile(p, nil, 0o644)
			if j == k {
				os.Chtimes(p, at, at.Add(time.Second))
			} else {
				os.Chtimes(p, at, at)
			}
		}
	}
	failed := []*Result{{Stream: &bench.Stream{}}, {Stream: &bench.Stream{}}}
	exited := func(at time.Time) *exitWatch {
		w := &exitWatch{done: make(chan struct{}), at: at}
		close(w.done)
		return w
	}
	endedAt, _ := ended.exitedAt()
	for _, tc := range []struct {
		name        string
		r1          *exitWatch
		writtenLast int
		want        int
	}{
		{"found ended before rank 1 exited: rank 0", exited(endedAt.Add(time.Millisecond)), 0, 0},
		{"rank 1 exited before the look: the streams' last writes", exited(endedAt.Add(-time.Millisecond)), 1, 0},
		{"rank 1's exit unknown: the streams' last writes", nil, 0, 1},
	} {
		writtenLast(tc.writtenLast)
		if got := firstStopped(failed, stopTimes(failed, []*exitWatch{ended, tc.r1}, paths)); got != tc.want {
			t.Errorf("%s: blamed rank %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestLaunchedStopsARankLeftBehind: a rank in a session of its own (as
// torchrun starts them) that outlives its launcher holds the launcher's
// output pipe and would hold the run until it ends; the run ends soon
// after the launcher, and the rank is killed.
func TestLaunchedStopsARankLeftBehind(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "run.rank{rank}.jsonl")
	rank0 := strings.ReplaceAll(tmpl, "{rank}", "0")
	meta := `echo "{\"type\":\"meta\",\"schema\":1,\"pid\":$$}" >> "$0"`
	// The launcher exits once the rank's meta record is read (its exit
	// watched), as a real one does long after: a rank that outlives it
	// before that is no longer its descendant, and is not watched.
	watched := filepath.Join(dir, "watched")
	launcher := `setsid sh -c '` + meta + `; exec sleep 600' "` + rank0 + `" &
i=0; while [ ! -e "` + watched + `" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; exit 1`
	g := &Launched{
		OnRecord: func(rank int, rec bench.Record) {
			if _, ok := rec.(*bench.Meta); ok {
				os.WriteFile(watched, nil, 0o644)
			}
		},
		Command:      []string{"sh", "-c", launcher, "launcher"},
		Script:       "worker.pyz",
		Template:     tmpl,
		RecordsPaths: []string{rank0},
		Stdout:       io.Discard,
		Stderr:       io.Discard,
		Grace:        time.Second,
	}
	done := make(chan error, 1)
	go func() { _, err := g.Run(context.Background()); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the run still waits for a rank its launcher left behind")
	}
	f, err := os.Open(rank0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := bench.ReadStream(f, rank0)
	if err != nil || s.Meta == nil || s.Meta.PID <= 0 {
		t.Fatalf("no rank pid in %s", rank0)
	}
	for i := 0; ; i++ {
		if err := syscall.Kill(s.Meta.PID, 0); errors.Is(err, syscall.ESRCH) {
			break
		}
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.Meta.PID)); strings.Contains(string(b), ") Z ") {
			break // dead, not yet reaped by its new parent
		}
		if i == 50 {
			t.Fatalf("rank %d left behind is still running", s.Meta.PID)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
