package runner

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/gcjitter/gcjitter/results"
)

// The calibration workload: a walk of a fixed random pointer graph (what a
// collection does: load a pointer, visit, go on), about 2 MiB so that it
// sits in the last-level cache of any host and measures the core rather
// than a shared memory bus, and a fixed integer and floating-point loop
// (what an interpreter does). Both are in Go, in gcjitter itself: nothing
// the software under test can change.
const (
	calWalkNodes   = 1 << 17
	calWalkSteps   = 1 << 22
	calComputeIter = 16 << 20
	calRepeats     = 3
)

type calNode struct {
	next        int32
	weight      int32
	left, right int32
}

var (
	calGraphOnce sync.Once
	calGraph     []calNode
)

// graph is one cycle through every node in a seeded random order
// (Sattolo's shuffle), the same in every process.
func graph() []calNode {
	calGraphOnce.Do(func() {
		perm := make([]int32, calWalkNodes)
		for i := range perm {
			perm[i] = int32(i)
		}
		rng := rand.New(rand.NewPCG(0x67636a, 0x63616c))
		for i := len(perm) - 1; i > 0; i-- {
			j := rng.IntN(i)
			perm[i], perm[j] = perm[j], perm[i]
		}
		calGraph = make([]calNode, calWalkNodes)
		for i, p := range perm {
			calGraph[p] = calNode{next: perm[(i+1)%len(perm)], weight: int32(i & 7), left: perm[(i+7)%len(perm)], right: perm[(i+13)%len(perm)]}
		}
	})
	return calGraph
}

// calSink keeps the loops' results alive, so the compiler cannot drop them.
var calSink int64

func walk(g []calNode) time.Duration {
	t := time.Now()
	p, sum := int32(0), int32(0)
	for range calWalkSteps {
		n := &g[p]
		sum += n.weight + g[n.left].weight&1
		p = n.next
	}
	d := time.Since(t)
	calSink += int64(sum)
	return d
}

func compute() time.Duration {
	t := time.Now()
	x, f := uint64(88172645463325252), 1.0
	for range calComputeIter {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		f = f*0.999999 + float64(x>>40)*1e-9
	}
	d := time.Since(t)
	calSink += int64(x) + int64(f)
	return d
}

// Calibrate measures the host's speed once: each part the fastest of a few
// repeats, so that one preemption does not count as a slower host. About
// 0.2 s on a 2-core VM.
func Calibrate() results.SpeedPoint {
	g := graph()
	w, c := time.Duration(1<<62), time.Duration(1<<62)
	for range calRepeats {
		w, c = min(w, walk(g)), min(c, compute())
	}
	return results.SpeedPoint{At: time.Now().UTC(),
		WalkNS:    float64(w.Nanoseconds()) / calWalkSteps,
		ComputeNS: float64(c.Nanoseconds()) / calComputeIter}
}
