package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/gcjitter/gcjitter/runner"
)

// TestRunGroupMarksTheRankThatStoppedIt: rank 1 fails first; rank 0 would
// run for minutes and is stopped. Only rank 1 carries StoppedGroup, which
// is what the session blames (not the lowest failed rank: a peer whose
// collective broke fails on its own a moment later).
func TestRunGroupMarksTheRankThatStoppedIt(t *testing.T) {
	r0 := fakeWorker(t, `echo "{\"type\":\"meta\",\"schema\":1,\"pid\":$$}" >&3
exec sleep 600
`)
	r1 := fakeWorker(t, `echo "{\"type\":\"meta\",\"schema\":1,\"pid\":$$}" >&3
exit 4
`)
	for _, w := range []*runner.Worker{r0, r1} {
		w.Grace = 500 * time.Millisecond
	}
	res, err := runner.RunGroup(context.Background(), []*runner.Worker{r0, r1})
	if err != nil {
		t.Fatal(err)
	}
	if !res[1].StoppedGroup || res[0].StoppedGroup {
		t.Errorf("StoppedGroup: rank 0 %v, rank 1 %v; want only rank 1", res[0].StoppedGroup, res[1].StoppedGroup)
	}
	if !res[0].Failed() || res[0].Stopped == nil {
		t.Errorf("rank 0: failed %v, stopped by %v; want stopped by the group", res[0].Failed(), res[0].Stopped)
	}
}
