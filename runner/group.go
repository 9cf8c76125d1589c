package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
)

// GroupEnv is the torchrun environment contract for rank of world on this
// host, with the rendezvous at 127.0.0.1:port.
func GroupEnv(rank, world, port int) map[string]string {
	return map[string]string{
		"RANK": strconv.Itoa(rank), "LOCAL_RANK": strconv.Itoa(rank), "WORLD_SIZE": strconv.Itoa(world),
		"LOCAL_WORLD_SIZE": strconv.Itoa(world), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": strconv.Itoa(port),
	}
}

// FreePort asks the kernel for a free loopback port for a rendezvous, so
// that concurrent invocations never collide on a fixed one.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port for the ranks' rendezvous: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// RankError says which rank brought a group down.
type RankError struct {
	Rank   int
	Reason string
}

func (e *RankError) Error() string { return fmt.Sprintf("rank %d failed: %s", e.Rank, e.Reason) }

// RunGroup runs one worker per rank, all at once, and waits for all of
// them. When one fails or is stopped, the others are stopped too (their
// collectives would wait forever on it), and the first failure is the
// cause the others report. Results are indexed by rank; the error is the
// first start or write failure.
func RunGroup(ctx context.Context, ranks []*Worker) ([]*Result, error) {
	groupCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	results := make([]*Result, len(ranks))
	errs := make([]error, len(ranks))
	var wg sync.WaitGroup
	for i, w := range ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := w.Run(groupCtx)
			results[i], errs[i] = res, err
			switch {
			case err != nil:
				stop(&RankError{i, err.Error()})
			case res.Failed() && res.Stopped == nil:
				stop(&RankError{i, res.Reason()})
			}
		}()
	}
	wg.Wait()
	// The first rank to fail set the cause. Others may fail on their own a
	// moment later (a collective whose peer died), and must not be blamed.
	var first *RankError
	if errors.As(context.Cause(groupCtx), &first) && results[first.Rank] != nil {
		results[first.Rank].StoppedGroup = true
	}
	// The error is the rank's that stopped the group: the others', waiting
	// on it (a warm group's start), are the cancel it caused.
	if first != nil && errs[first.Rank] != nil {
		return results, errs[first.Rank]
	}
	for _, err := range errs {
		if err != nil {
			return results, err
		}
	}
	return results, nil
}
