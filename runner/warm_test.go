package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/bench"
	"github.com/gcjitter/gcjitter/cases"
)

// torchPython is the interpreter with torch, or a skip (a failure in CI).
func torchPython(t testing.TB) string {
	t.Helper()
	py, err := FindPython(context.Background(), "", true)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI needs an interpreter with torch: %v", err)
		}
		t.Skipf("no interpreter with torch: %v", err)
	}
	return py
}

// startRun runs one variant of c, warm (from pool) or cold (pool nil),
// with --census when census is set.
func startRun(t testing.TB, pool *Warm, py, script string, c *cases.Case, v cases.Variant, hashSeed uint32, census bool, name string) *Result {
	t.Helper()
	cfg := c.WorkerConfig(v)
	cfg.Census = census
	w := &Worker{Python: py, Script: script, Args: cfg.Args(),
		Env:         WorkerEnv(ParentEnv(), hashSeed, threadsFor(c), c.Env, v.Env, nil),
		RecordsPath: filepath.Join(t.TempDir(), name+".jsonl"), Warm: pool, Torch: c.NeedsTorch(), WarmScope: c.Name,
		Startup: 5 * time.Minute, Silence: 5 * time.Minute}
	res, err := w.Run(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.Failed() {
		t.Fatalf("%s failed: %s\n%s", name, res.Reason(), res.StderrTail)
	}
	want := "cold"
	if pool != nil {
		want = "warm"
	}
	if got := res.Stream.Meta.Start; got != want {
		t.Fatalf("%s: meta start %q, want %q", name, got, want)
	}
	return res
}

// warmPool is what a warm test needs: the interpreter with torch, the
// worker written out, and a pool closed (and no server left, checked) when
// the test ends. It skips where warm starts are not supported.
func warmPool(t *testing.T) (py, script string, pool *Warm) {
	t.Helper()
	if !WarmSupported() {
		t.Skip("no warm starts on this platform")
	}
	py = torchPython(t)
	script, err := bench.WriteWorker(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pool = NewWarm(nil)
	t.Cleanup(func() { noServerLeft(t) })
	t.Cleanup(pool.Close)
	return py, script, pool
}

// schedule is a run's GC schedule, step by step: the young counts after
// each step and every collection's generation, yield and place; and the
// interpreter's own counts of collections per generation over the loop.
func schedule(s *bench.Stream) []string {
	var out []string
	for _, st := range s.Steps {
		line := fmt.Sprintf("step %d count %v:", st.Index, st.Count)
		for _, e := range st.GC {
			line += fmt.Sprintf(" gen%d collected %d uncollectable %d in_step %v manual %v",
				e.Gen, e.Collected, e.Uncollectable, e.InStep, e.Manual)
		}
		out = append(out, line)
	}
	for g, x := range s.End.GCStats {
		out = append(out, fmt.Sprintf("end: gen%d collections %d collected %d", g, x.Collections, x.Collected))
	}
	return out
}

// census is what a census run's collections walked, per generation.
func census(s *bench.Stream) [3]int64 {
	var w [3]int64
	for _, st := range s.Steps {
		for _, e := range st.GC {
			w[e.Gen] += e.Objects
		}
	}
	return w
}

// firstDiff says where two schedules part, "" when they are the same.
func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("cold: %s\nwarm: %s", a[i], b[i])
		}
	}
	if len(a) != len(b) {
		return fmt.Sprintf("cold has %d lines, warm %d", len(a), len(b))
	}
	return ""
}

// TestWarmRunHasTheColdSchedule: a run forked from the warm server makes
// the collections a fresh interpreter makes, step by step, for every
// variant of the smoke case on real torch and of a case without torch
// (whose server imports nothing: a cold run of it imports socket and json
// after the collector's reset), and walks the same heap: every full
// collection's census is the cold run's, to the object (the server reaps
// without importing resource, drops its own file from linecache, and the
// reset collects to a fixed point; docs/worker.md).
func TestWarmRunHasTheColdSchedule(t *testing.T) {
	py, script, pool := warmPool(t)
	none := builtinCase(t, "device-bound-periodic-gc")
	// 45 steps hold a full collection; the device's wait allocates
	// nothing, so without it the schedule is the same, sooner.
	none.Steps, none.Workload.DeviceWaitMS = 45, 0
	for _, v := range none.Variants {
		cold := startRun(t, nil, py, script, none, v, 7, true, v.Name+"-none-cold")
		warm := startRun(t, pool, py, script, none, v, 7, true, v.Name+"-none-warm")
		sameCollections(t, v.Name+" (model none)", cold, warm)
	}
	c := builtinCase(t, "smoke")
	pool.started = 0
	var reported []time.Duration // each warm run's CPU, as its server reported it
	for _, v := range c.Variants {
		cold := startRun(t, nil, py, script, c, v, 7, true, v.Name+"-cold")
		warm := startRun(t, pool, py, script, c, v, 7, true, v.Name+"-warm")
		reported = append(reported, warm.UnreapedCPU)
		sameCollections(t, v.Name, cold, warm)
		if cold.Stream.Meta.PID == warm.Stream.Meta.PID {
			t.Errorf("%s: warm run has the cold run's pid", v.Name)
		}
		// Its server reaped it: the run's CPU comes back with its exit, or
		// the host-load sample counts the run as other load (every warm
		// run read ~1.0 other CPUs, and the busy rule judged no timing).
		if warm.UnreapedCPU <= 0 || cold.UnreapedCPU != 0 {
			t.Errorf("%s: unreaped CPU warm %v, cold %v; want the warm run's own time, none cold", v.Name, warm.UnreapedCPU, cold.UnreapedCPU)
		}
	}
	// The variants of one environment share one server: the second warm
	// run did not start a new one; the none case's server is kept too.
	if len(pool.held) != 2 || pool.started != 1 {
		t.Fatalf("%d servers started for one environment, want 1", pool.started)
	}
	// The root's import of torch (1.5-2.0 s of CPU with torch 1.13 here)
	// comes back with the first run of the server it forked, as a server
	// started on its own reports its import: CPU nobody reports is other
	// load, and a run beside it reads busy.
	if later := slices.Max(reported[1:]); reported[0]-later < 500*time.Millisecond {
		t.Errorf("CPU reported with the first warm run %v, the largest later %v; want the root's import in the first", reported[0], later)
	}
}

// TestWarmRunHasItsOwnCasesHeap: a run does not start from what another
// case's runs imported. A server imports what its runs imported before
// their collector's reset; resnet's model imports torchvision, and an
// ascend-gpt-periodic-gc run forked after it from the same server walked
// torchvision's objects in every full collection (and made 8 full
// collections in 200 steps where a cold run makes 9). Each case has its
// own server (Worker.WarmScope), so the run is a cold run's.
func TestWarmRunHasItsOwnCasesHeap(t *testing.T) {
	py, script, pool := warmPool(t)
	resnet := builtinCase(t, "resnet-gc-collect-every-step")
	resnet.Steps, resnet.Warmup = 1, 0
	ascend := builtinCase(t, "ascend-gpt-periodic-gc")
	// A tenth of its long-lived heap: full collections come sooner and
	// walk less, and torchvision's objects still show in every one.
	ascend.Garbage.LongLived /= 10
	ascend.Steps = 20
	def := ascend.Variants[slices.IndexFunc(ascend.Variants, func(v cases.Variant) bool { return v.Name == "default" })]
	cold := startRun(t, nil, py, script, ascend, def, 7, true, "ascend-cold")

	first := startRun(t, pool, py, script, resnet, resnet.Variants[0], 7, false, "resnet-warm")
	warm := startRun(t, pool, py, script, ascend, def, 7, true, "ascend-warm")
	sameCollections(t, "ascend after resnet, each its own server", cold, warm)
	if pool.started != 2 || pool.rootsStarted != 1 {
		t.Errorf("%d servers started for two cases from %d roots, want 2 from 1: torch imported once", pool.started, pool.rootsStarted)
	}

	// The hazard is real on this stack: the same run from resnet's
	// server walks another heap (unless torchvision is missing, when
	// resnet builds its own ResNet-18 and imports nothing more).
	if slices.ContainsFunc(first.Stream.Meta.Notes, func(n string) bool { return strings.Contains(n, "torchvision not importable") }) {
		t.Log("no torchvision: resnet imports nothing ascend does not")
		return
	}
	shared := *ascend
	shared.Name = resnet.Name
	mixed := startRun(t, pool, py, script, &shared, def, 7, true, "ascend-in-resnets-server")
	if census(cold.Stream) == census(mixed.Stream) {
		t.Errorf("ascend forked from resnet's server walked the cold heap (%v): the test no longer sees the hazard it guards", census(cold.Stream))
	}
}

// sameCollections fails the test unless a warm census run made the cold
// one's collections, step by step, over the same heap.
func sameCollections(t *testing.T, name string, cold, warm *Result) {
	t.Helper()
	if d := firstDiff(schedule(cold.Stream), schedule(warm.Stream)); d != "" {
		t.Errorf("%s: warm and cold schedules differ:\n%s", name, d)
	}
	if a, b := census(cold.Stream), census(warm.Stream); a != b {
		t.Errorf("%s: objects walked per generation: cold %v, warm %v; want the same heap", name, a, b)
	}
}

// builtinCase is the built-in case name at its reduced size.
func builtinCase(t testing.TB, name string) *cases.Case {
	t.Helper()
	all, err := cases.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(all, func(c *cases.Case) bool { return c.Name == name })
	if i < 0 {
		t.Fatalf("no built-in case %s", name)
	}
	all[i].ApplyReduced()
	return all[i]
}

// noServerLeft fails if a warm server of this process is still running
// (deferred after the pool's Close): a root, or a server started by this
// process or forked by one of its roots.
func noServerLeft(t *testing.T) {
	t.Helper()
	out, _ := os.ReadDir("/proc")
	parent := map[string]string{}
	var servers []string
	for _, e := range out {
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")) // gone meanwhile: no fields
		f := statFields(string(stat))
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		parent[e.Name()] = f[1]
		if cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && strings.Contains(string(cmd), "--warm-server") {
			servers = append(servers, e.Name())
		}
	}
	me := fmt.Sprint(os.Getpid())
	for _, pid := range servers {
		for p, hops := parent[pid], 0; p != "" && hops < 3; p, hops = parent[p], hops+1 {
			if p == me {
				t.Errorf("warm server %s outlived its pool", pid)
				break
			}
		}
	}
}

// TestWarmRunStopsLikeACold: a warm run killed from outside is reported
// killed with every step it wrote kept; a cancelled one has its process
// group stopped; a server that cannot start leaves the run cold.
func TestWarmRunStopsLikeACold(t *testing.T) {
	py, script, pool := warmPool(t)
	cfg := bench.DefaultConfig()
	cfg.Model, cfg.Device, cfg.Hidden, cfg.Steps, cfg.Warmup = "mlp", "cpu", 32, 100_000, 0
	long := func() *Worker {
		return &Worker{Python: py, Script: script, Args: cfg.Args(), RecordsPath: filepath.Join(t.TempDir(), "r.jsonl"),
			Grace: time.Second, Warm: pool, Torch: true, Env: append(os.Environ(), "PYTHONHASHSEED=0")}
	}

	w := long()
	var pid, seen int
	w.OnRecord = func(r bench.Record) {
		switch r := r.(type) {
		case *bench.Meta:
			pid = r.PID
		case *bench.Step:
			if seen++; seen == 20 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	res, err := w.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Stream.Meta.Start != "warm" || res.Signal != "SIGKILL" || len(res.Stream.Steps) < 20 {
		t.Fatalf("start %q, signal %q, %d steps; want a warm run killed by SIGKILL after 20 steps", res.Stream.Meta.Start, res.Signal, len(res.Stream.Steps))
	}

	w = long()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.OnRecord = func(r bench.Record) {
		switch r := r.(type) {
		case *bench.Meta:
			pid = r.PID
		case *bench.Step:
			if r.Index == 5 {
				cancel()
			}
		}
	}
	res, err = w.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Failed() || !errors.Is(res.Stopped, context.Canceled) {
		t.Fatalf("a cancelled warm run reads as %v (stopped: %v)", res.Reason(), res.Stopped)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("warm run %d still exists after Run returned: %v", pid, err)
	}

	// The same server serves the next run after the two it lost.
	w = long()
	w.Args = append(slices.Clone(w.Args), "--steps", "3")
	if res, err = w.Run(context.Background()); err != nil || res.Failed() || res.Stream.Meta.Start != "warm" {
		t.Fatalf("third warm run: %v %s", err, res.Reason())
	}

	// A server killed while it holds a run: the run fails (its exit status
	// is lost), the session does not, and the next run gets a new server.
	// 10 ms a step: the run outlasts the kill by 0.45 s on a loaded host.
	w = long()
	w.Args = append(slices.Clone(w.Args), "--steps", "50", "--device-wait-ms", "10")
	w.OnRecord = func(r bench.Record) {
		if st, ok := r.(*bench.Step); ok && st.Index == 5 {
			syscall.Kill(pool.held[len(pool.held)-1].pid, syscall.SIGKILL)
		}
	}
	res, err = w.Run(context.Background())
	var lost *LostServerError
	if err != nil || !res.Failed() || !errors.As(res.Stopped, &lost) {
		t.Fatalf("a lost server: error %v, reason %q; want a failed run, stopped by the lost server", err, res.Reason())
	}
	// How it ended, though the root forked it (an OOM kill reads so).
	if !strings.Contains(lost.Why, "signal: killed") {
		t.Errorf("a killed server: %q, want it to say signal: killed", lost.Why)
	}
	w = long()
	w.Args = append(slices.Clone(w.Args), "--steps", "3")
	if res, err = w.Run(context.Background()); err != nil || res.Failed() || res.Stream.Meta.Start != "warm" {
		t.Fatalf("the run after a lost server: %v %s", err, res.Reason())
	}

	// An interpreter that cannot be a server: the run starts cold (and
	// fails as a cold run would, naming the interpreter).
	w = long()
	w.Python = filepath.Join(t.TempDir(), "no-python")
	if _, err = w.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "no-python") {
		t.Errorf("a missing interpreter: %v", err)
	}
}

// startGroup runs one variant of the multi-rank case c as the session
// does (every rank at once, RunGroup), warm (from pool) or cold (pool
// nil), with --census when census is set; the results are per rank.
func startGroup(t testing.TB, ctx context.Context, pool *Warm, py, script string, c *cases.Case, v cases.Variant, hashSeed uint32, census bool, name string, onRecord func(rank int, r bench.Record)) []*Result {
	t.Helper()
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.WorkerConfig(v)
	cfg.Census = census
	var group *WarmGroup
	if pool != nil {
		group = NewWarmGroup(c.Ranks)
	}
	ranks := make([]*Worker, c.Ranks)
	for k := range ranks {
		ranks[k] = &Worker{Python: py, Script: script, Args: cfg.Args(),
			Env:         WorkerEnv(ParentEnv(), hashSeed, threadsFor(c), c.Env, v.Env, GroupEnv(k, c.Ranks, port)),
			RecordsPath: filepath.Join(t.TempDir(), fmt.Sprintf("%s-rank%d.jsonl", name, k)),
			Warm:        pool, Torch: c.NeedsTorch(), Group: group, Grace: time.Second,
			Startup: 5 * time.Minute, Silence: 5 * time.Minute}
		if onRecord != nil {
			ranks[k].OnRecord = func(r bench.Record) { onRecord(k, r) }
		}
	}
	res, err := RunGroup(ctx, ranks)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// TestWarmGroupHasTheColdSchedule: the ranks of a multi-rank run fork
// together from one server, each with its own rank's environment, and
// each makes the collections its cold rank makes, over the same heap
// (straggler-gc: per-rank garbage, so a rank that took another's RANK
// would make another's schedule). Every run of the case uses the same
// server. A group cancelled mid-run is stopped rank by rank, and the
// server serves the next one.
func TestWarmGroupHasTheColdSchedule(t *testing.T) {
	py, script, pool := warmPool(t)
	c := builtinCase(t, "straggler-gc")
	c.Ranks, c.Steps = 2, 120 // each rank's first full collection within 120 steps
	ctx := context.Background()
	for _, v := range c.Variants[:2] { // default, manual:40
		cold := startGroup(t, ctx, nil, py, script, c, v, 7, true, v.Name+"-cold", nil)
		warm := startGroup(t, ctx, pool, py, script, c, v, 7, true, v.Name+"-warm", nil)
		for k := range cold {
			for _, r := range []*Result{cold[k], warm[k]} {
				if r.Failed() {
					t.Fatalf("%s rank %d: %s\n%s", v.Name, k, r.Reason(), r.StderrTail)
				}
			}
			if cold[k].Stream.Meta.Start != "cold" || warm[k].Stream.Meta.Start != "warm" {
				t.Fatalf("%s rank %d: started %s and %s, want cold and warm", v.Name, k, cold[k].Stream.Meta.Start, warm[k].Stream.Meta.Start)
			}
			if warm[k].Stream.Meta.Rank != k {
				t.Errorf("%s: the warm run's rank %d says it is rank %d", v.Name, k, warm[k].Stream.Meta.Rank)
			}
			sameCollections(t, fmt.Sprintf("%s rank %d", v.Name, k), cold[k], warm[k])
			if census(warm[k].Stream)[2] == 0 {
				t.Errorf("%s rank %d: no full collection in %d steps: the census compares nothing", v.Name, k, c.Steps)
			}
			if warm[k].UnreapedCPU <= 0 {
				t.Errorf("%s rank %d: no CPU time came back with the warm rank's exit", v.Name, k)
			}
		}
		if d := firstDiff(schedule(warm[0].Stream), schedule(warm[1].Stream)); d == "" && v.Policy == "default" {
			t.Errorf("%s: both warm ranks made one schedule: per-rank garbage should part them", v.Name)
		}
	}
	if pool.started != 1 {
		t.Fatalf("%d servers started for one case's multi-rank runs, want 1", pool.started)
	}
	// A single-rank run of the same environment has a server of its own:
	// the ranks' server preloaded torch.distributed, which a single rank
	// imports nowhere.
	single := *c
	single.Ranks = 1
	cold := startRun(t, nil, py, script, &single, c.Variants[0], 7, true, "single-cold")
	warm := startRun(t, pool, py, script, &single, c.Variants[0], 7, true, "single-warm")
	sameCollections(t, "one rank alone", cold, warm)
	if pool.started != 2 {
		t.Errorf("a single-rank run took the ranks' server (%d started)", pool.started)
	}

	// Cancelled at rank 1's 10th step: every rank stopped, none left.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pids := make([]int, c.Ranks)
	var mu sync.Mutex
	res := startGroup(t, cctx, pool, py, script, c, c.Variants[0], 7, true, "cancelled", func(rank int, r bench.Record) {
		mu.Lock()
		defer mu.Unlock()
		switch r := r.(type) {
		case *bench.Meta:
			pids[rank] = r.PID
		case *bench.Step:
			if rank == 1 && r.Index == 10 {
				cancel()
			}
		}
	})
	for k, r := range res {
		if !errors.Is(r.Stopped, context.Canceled) || r.Stream.Meta.Start != "warm" {
			t.Errorf("rank %d of a cancelled warm group: %s (stopped: %v)", k, r.Reason(), r.Stopped)
		}
		if err := syscall.Kill(pids[k], 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("rank %d (pid %d) still exists after its run returned: %v", k, pids[k], err)
		}
	}
	short := *c
	short.Steps = 5
	for k, r := range startGroup(t, ctx, pool, py, script, &short, c.Variants[0], 7, true, "after", nil) {
		if r.Failed() || r.Stream.Meta.Start != "warm" {
			t.Errorf("rank %d after a cancelled group: %s, started %s", k, r.Reason(), r.Stream.Meta.Start)
		}
	}
	if pool.started != 2 {
		t.Errorf("%d servers started, want the ranks' and the single rank's", pool.started)
	}
}

// TestWarmGroupGivesUpOnce: a group whose context ends while some ranks
// wait for the rest (a rank that failed before it joined, a Ctrl-C)
// lets every waiter go with the context's error, however many wait, and
// a rank that joins later starts nothing (planted: every waiter closing
// the group panics with "close of closed channel").
func TestWarmGroupGivesUpOnce(t *testing.T) {
	for range 20 {
		g := NewWarmGroup(4)
		ctx, cancel := context.WithCancel(context.Background())
		errs := make(chan error, 3)
		for range 3 {
			go func() {
				run, err := g.join(ctx, nil, "key", serverSpec{}, warmProc{})
				if run != nil {
					err = fmt.Errorf("a run from a group that never started")
				}
				errs <- err
			}()
		}
		for joined := 0; joined < 3; {
			g.mu.Lock()
			joined = len(g.procs)
			g.mu.Unlock()
			time.Sleep(time.Millisecond)
		}
		cancel()
		for range 3 {
			if err := <-errs; !errors.Is(err, context.Canceled) {
				t.Fatalf("a waiting rank: %v, want the context's error", err)
			}
		}
		if run, err := g.join(context.Background(), nil, "key", serverSpec{}, warmProc{}); run != nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("a rank joining after the group gave up: run %v, error %v", run, err)
		}
	}
}

// TestWarmRunAppendsToItsOutputFile: a warm run's stdout and stderr, one
// file as a session gives them, are written after what the file holds,
// as a cold run's are. The child once reopened the file through /proc,
// with an offset of its own at 0, and wrote over it.
func TestWarmRunAppendsToItsOutputFile(t *testing.T) {
	py, script, pool := warmPool(t)
	for _, start := range []struct {
		name string
		pool *Warm
	}{{"cold", nil}, {"warm", pool}} {
		out, err := os.Create(filepath.Join(t.TempDir(), "run.stderr"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := out.WriteString("before the run\n"); err != nil {
			t.Fatal(err)
		}
		w := &Worker{Python: py, Script: script, Args: []string{"--measure-overhead", "1000"},
			Env:         WorkerEnv(ParentEnv(), 7, 1),
			RecordsPath: filepath.Join(t.TempDir(), "r.jsonl"), Stdout: out, Stderr: out,
			Warm: start.pool, WarmScope: "overhead", Startup: time.Minute, Silence: time.Minute}
		if _, err := w.Run(context.Background()); err != nil {
			t.Fatalf("%s: %v", start.name, err)
		}
		out.Close()
		b, err := os.ReadFile(out.Name())
		if err != nil {
			t.Fatal(err)
		}
		// measure-overhead prints one number on stdout.
		if !strings.HasPrefix(string(b), "before the run\n") || len(strings.TrimSpace(strings.TrimPrefix(string(b), "before the run\n"))) == 0 {
			t.Errorf("%s run's output file: %q, want what it held, then the run's output", start.name, b)
		}
	}
	if pool.started != 1 {
		t.Errorf("the warm run started %d servers, want 1 (else it ran cold)", pool.started)
	}
}

// TestWarmStartSurvivesAChildThatDiedUnstarted: a server whose child ends
// before it reports "started" (killed between the fork and its reply)
// answers only with the child's exit; the start fails (the run then starts
// cold) instead of waiting for a reply that never comes. The server here
// is a shell script that speaks the protocol.
func TestWarmStartSurvivesAChildThatDiedUnstarted(t *testing.T) {
	pool, spec, proc := fakeServer(t, `echo "exit 999999 9 0"`)
	done := make(chan error, 1)
	go func() {
		run, err := pool.startOne(context.Background(), "k", spec, proc)
		if run != nil {
			err = errors.New("started a run no child answered for")
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the start still waits for a child that ended before it started")
	}
}

// TestWarmWaitGivesUpOnASilentServer: a server that never reports a run's
// exit (stuck after the run ended) is stopped after warmExitWait and the
// run's wait ends as a lost server's, instead of holding the session.
func TestWarmWaitGivesUpOnASilentServer(t *testing.T) {
	defer func(d time.Duration) { warmExitWait = d }(warmExitWait)
	warmExitWait = time.Second
	pool, spec, proc := fakeServer(t, `echo "started $$ 0"`)
	run, err := pool.startOne(context.Background(), "k", spec, proc)
	if err != nil || run == nil {
		t.Fatalf("start: %v, %v", run, err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := run.wait(); done <- err }()
	select {
	case err := <-done:
		var lost *LostServerError
		if !errors.As(err, &lost) {
			t.Fatalf("wait: %v, want a lost server", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the wait still holds for a server that never reports the exit")
	}
}

// TestWarmGroupNamesTheRankThatFailed: a rank that fails before it joins
// its warm group (its records file cannot be opened) stops the group, and
// the group's error is that rank's, not the cancel its peers, waiting to
// start together, got from it.
func TestWarmGroupNamesTheRankThatFailed(t *testing.T) {
	pool := NewWarm(nil)
	defer pool.Close()
	group := NewWarmGroup(2)
	dir := t.TempDir()
	ranks := []*Worker{
		{Python: "python3", Script: "worker.pyz", RecordsPath: filepath.Join(dir, "r0.jsonl"), Warm: pool, Torch: true, Group: group, Startup: time.Minute},
		{Python: "python3", Script: "worker.pyz", RecordsPath: filepath.Join(dir, "missing", "r1.jsonl"), Warm: pool, Torch: true, Group: group, Startup: time.Minute},
	}
	_, err := RunGroup(context.Background(), ranks)
	if err == nil || !strings.Contains(err.Error(), "records file") || errors.Is(err, context.Canceled) {
		t.Errorf("group error %v; want rank 1's records file error", err)
	}
}

// fakeServer is a pool whose server is a shell script speaking the warm
// protocol: ready, one request read, then reply (a line of the protocol),
// then silence; with the spec and a run to ask of it.
func fakeServer(t *testing.T, reply string) (*Warm, serverSpec, warmProc) {
	t.Helper()
	dir := t.TempDir()
	fake := filepath.Join(dir, "server")
	script := "#!/bin/sh\necho ready\nread n\nread len\nhead -c \"$len\" >/dev/null\n" + reply + "\nsleep 30\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	records, err := os.Create(filepath.Join(dir, "r.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	pool := NewWarm(nil)
	t.Cleanup(func() { pool.Close(); records.Close() })
	return pool, serverSpec{python: fake, script: "x", startup: time.Minute}, warmProc{records: records, args: []string{"--steps", "1"}}
}
