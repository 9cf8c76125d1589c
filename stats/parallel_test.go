package stats

import (
	"runtime"
	"sync"
)

// inParallel calls f(0) ... f(n-1) on GOMAXPROCS goroutines and returns
// when all have: for known-truth studies whose cells are seeded on their
// own, so the figures do not depend on the order they run in.
func inParallel(n int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
