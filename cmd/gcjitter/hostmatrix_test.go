package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/internal/testpython"
	"github.com/gcjitter/gcjitter/results"
	"github.com/gcjitter/gcjitter/runner"
)

// Environment keys of the host-speed matrix (make matrix).
const (
	matrixRepsEnv   = "GCJITTER_MATRIX_REPS"   // repetitions per cell; unset: one cell in make test
	matrixScalesEnv = "GCJITTER_MATRIX_SCALES" // compute scales, e.g. 0.5,1,2
	matrixCasesEnv  = "GCJITTER_MATRIX_CASES"  // cases to run (default: the quick suite)
	matrixBurnerEnv = "GCJITTER_MATRIX_BURNER" // on, off or both (default with REPS: both)
)

// TestHostSpeedMatrix runs the quick suite's expectations on this host made
// slower and faster (the workload's compute scaled) and busier (a process
// burning a CPU beside the runs): a signature that holds only at one host
// speed measures the host, not the jitter. By default it runs one hard
// cell, the GPT periodic-spike case at twice the compute with a burner,
// its default and freeze variants: theirs are the expectations a host's
// speed and load can move (spikes, their period and excess, the frozen
// pause's ratio); the other three's are counts and RSS growth, the same on
// any host, and gated on every run of the quick suite. make matrix runs
// every cell and variant GCJITTER_MATRIX_REPS times and prints the table
// that docs/suite.md quotes.
func TestHostSpeedMatrix(t *testing.T) {
	py := testpython.Torch(t)
	reps, scales, burners := 1, []string{"2"}, []bool{true}
	caseArgs := []string{"-filter", "^(default|freeze)$", "ascend-gpt-periodic-gc"}
	if s := os.Getenv(matrixRepsEnv); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a count >= 1", matrixRepsEnv, s)
		}
		reps, scales, burners, caseArgs = n, []string{"0.5", "1", "2"}, []bool{false, true}, nil
	}
	if s := os.Getenv(matrixScalesEnv); s != "" {
		scales = strings.Split(s, ",")
	}
	if s := os.Getenv(matrixCasesEnv); s != "" {
		caseArgs = strings.Fields(s)
	}
	switch s := os.Getenv(matrixBurnerEnv); s {
	case "":
	case "on":
		burners = []bool{true}
	case "off":
		burners = []bool{false}
	case "both":
		burners = []bool{false, true}
	default:
		t.Fatalf("%s=%q: want on, off or both", matrixBurnerEnv, s)
	}
	checkLine := regexp.MustCompile(`(?m)^  (\S+ \S+ .*): (ok|FAILED) \(`)
	var table strings.Builder
	fmt.Fprintf(&table, "compute  burner  held  expectations failed (count)\n")
	for _, scale := range scales {
		for _, burn := range burners {
			held := 0
			failed := map[string]int{}
			for rep := range reps {
				if burn {
					startBurnerUnlessBusy(t)
				}
				var stdout, stderr bytes.Buffer
				args := append([]string{"run", "-python", py, "-reduced", "-runs", "1", "-check",
					"-compute-scale", scale, "-seed", strconv.Itoa(rep + 1), "-o", filepath.Join(t.TempDir(), "out")}, caseArgs...)
				code := run(context.Background(), args, &stdout, &stderr)
				if burn {
					stopBurners(t)
				}
				ok := code == 0
				for _, m := range checkLine.FindAllStringSubmatch(stdout.String(), -1) {
					if m[2] == "FAILED" {
						failed[m[1]]++
						ok = false
					}
				}
				if ok {
					held++
				} else if code != 1 || len(failed) == 0 {
					t.Errorf("compute x%s burner %v rep %d: exit %d\n%s\n%s", scale, burn, rep+1, code, stdout.String(), stderr.String())
				}
			}
			var why []string
			for k, n := range failed {
				why = append(why, fmt.Sprintf("%s (%d)", k, n))
			}
			fmt.Fprintf(&table, "x%-6s  %-6v  %d/%d  %s\n", scale, burn, held, reps, strings.Join(why, "; "))
			if held != reps {
				t.Errorf("compute x%s, burner %v: expectations held in %d of %d repetitions: %s", scale, burn, held, reps, strings.Join(why, "; "))
			}
		}
	}
	t.Logf("host-speed matrix (%s):\n%s", strings.Join(caseArgs, " "), table.String())
}

var burners []*exec.Cmd

// startBurnerUnlessBusy starts the cell's neighbour, unless the host
// already has one: other processes keeping at least results.BusyMinCPUs
// busy over two seconds. The cell claims the expectations hold beside one
// neighbour; its own burner beside a neighbour already there made two
// (make test in a clean clone beside a busy loop: ascend's gen2-spiking
// share 0.5 at x2, want >= 0.8), which no cell claims.
func startBurnerUnlessBusy(t *testing.T) {
	t.Helper()
	if other, busiest, ok := runner.OtherLoad(context.Background(), 2*time.Second); ok && other >= results.BusyMinCPUs {
		t.Logf("no burner started: other processes already keep %.2f CPUs busy (%v), the cell's neighbour", other, busiest)
		return
	}
	startBurner(t)
}

// startBurner starts a process that spins on one CPU beside the runs, as a
// noisy neighbour on a shared CI host would; the test's end stops it if a
// failure does not.
func startBurner(t *testing.T) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the CPU burner: %v", err)
	}
	burners = append(burners, cmd)
	t.Cleanup(func() { stopBurners(t) })
}

func stopBurners(t *testing.T) {
	for _, cmd := range burners {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}
	burners = nil
}
