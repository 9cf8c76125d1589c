package runner

import (
	"testing"

	"github.com/gcjitter/gcjitter/results"
)

// The same fault compares equal whatever the numbers in it: a loaded host
// dies after 93 steps where another got to 129.
func TestFailureCauseIgnoresNumbers(t *testing.T) {
	a := &results.Run{Reason: "worker exited with status 7 after 129 steps", StderrTail: "Killed at 0x7f3a21\n"}
	b := &results.Run{Reason: "worker exited with status 7 after 93 steps", StderrTail: "Killed at 0x9\n"}
	c := &results.Run{Reason: "worker killed by SIGKILL after 93 steps"}
	if failureCause(a) != failureCause(b) {
		t.Errorf("%q and %q differ", failureCause(a), failureCause(b))
	}
	if failureCause(a) == failureCause(c) {
		t.Errorf("two different faults compare equal: %q", failureCause(c))
	}
}
