package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/internal/testpython"
	"github.com/gcjitter/gcjitter/runner"
	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the scripts' expected outputs")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"gcjitter": main,
	})
}

// TestScripts runs testdata/script/*.txtar: each file is one CLI behaviour.
// $TORCH_PYTHON is the interpreter with torch.
func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams(t, "testdata/script"))
}

// TestSerialScripts runs testdata/serial/*.txtar one at a time, after the
// others (top-level tests run in turn): scripts that measure this host's
// speed, which the side-by-side scripts would move.
func TestSerialScripts(t *testing.T) {
	p := scriptParams(t, "testdata/serial")
	t.Run("one at a time", func(t *testing.T) {
		files, _ := filepath.Glob(filepath.Join(p.Dir, "*.txtar"))
		for _, f := range files {
			p.Files, p.Dir = []string{f}, ""
			testscript.Run(t, p)
		}
	})
}

// TestStackScripts runs testdata/stack/*.txtar on the framework stack
// (scripts/stack.sh frameworks: torch 2.15, transformers, lightning), named
// by GCJITTER_STACK_PYTHON: make matrix-stack sets it; make test does not
// (a 5.6 GB venv), and skips.
func TestStackScripts(t *testing.T) {
	py := os.Getenv("GCJITTER_STACK_PYTHON")
	if py == "" {
		t.Skip("GCJITTER_STACK_PYTHON is unset: make matrix-stack makes the stack and runs these")
	}
	p := scriptParams(t, "testdata/stack")
	setup := p.Setup
	p.Setup = func(env *testscript.Env) error {
		env.Setenv("STACK_PYTHON", py)
		frameworks, err := filepath.Abs("../../bench/frameworks")
		if err != nil {
			return err
		}
		env.Setenv("FRAMEWORKS", frameworks)
		return setup(env)
	}
	testscript.Run(t, p)
}

func scriptParams(t *testing.T, dir string) testscript.Params {
	py := testpython.Torch(t)
	scripts, err := filepath.Abs("../../scripts")
	if err != nil {
		t.Fatal(err)
	}
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		UpdateScripts:       *update,
		Setup: func(env *testscript.Env) error {
			env.Setenv("TORCH_PYTHON", py)
			env.Setenv("GCJITTER_SCRIPTS", scripts)
			env.Setenv("HOME", env.WorkDir) // the worker is cached under $HOME/.cache
			// Scripts that launch ranks themselves need a rendezvous port
			// nobody else holds; a fixed one fails when CI runs anything else.
			port, err := runner.FreePort()
			if err != nil {
				return err
			}
			env.Setenv("FREE_PORT", strconv.Itoa(port))
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "cpuquota" {
				return cpuQuotaWritable(), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":  cmdStatus,
			"waitfor": cmdWaitFor,
			"nights":  cmdNights,
		},
	}
}

// cpuQuotaWritable says whether scripts/cpuquota.sh can make a host of
// another speed here: a cgroup v1 cpu controller this process may write.
func cpuQuotaWritable() bool {
	dir, err := os.MkdirTemp("/sys/fs/cgroup/cpu", "gcjitter-probe-")
	if err != nil {
		return false
	}
	defer os.Remove(dir)
	return os.WriteFile(filepath.Join(dir, "cpu.cfs_period_us"), []byte("2000"), 0o644) == nil &&
		os.WriteFile(filepath.Join(dir, "cpu.cfs_quota_us"), []byte("1000"), 0o644) == nil
}

// cmdStatus runs a command and checks its exact exit status, which is part
// of the CLI's contract: status 2 gcjitter worker -policy bogus. CODE may
// list the statuses a script accepts where the contract allows either
// (status 0,1 gcjitter advise ...: recommended or undecided).
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status CODE[,CODE...] command [args...]")
	}
	var codes []int
	for _, c := range strings.Split(args[0], ",") {
		n, err := strconv.Atoi(c)
		if err != nil {
			ts.Fatalf("status: bad code %q", args[0])
		}
		codes = append(codes, n)
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("status: %v", err)
		}
		got = ee.ExitCode()
	}
	if !slices.Contains(codes, got) {
		ts.Fatalf("exit status %d, want %s", got, args[0])
	}
}

// cmdWaitFor waits (up to two minutes) until a file exists and matches a
// regular expression: waitfor out/runs/x/run-01.jsonl '"i":20,'
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitfor FILE REGEXP")
	}
	re, err := regexp.Compile(args[1])
	if err != nil {
		ts.Fatalf("waitfor: %v", err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(ts.MkAbs(args[0])); err == nil && re.Match(b) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	ts.Fatalf("waitfor: %s did not match %s within two minutes", args[0], args[1])
}
