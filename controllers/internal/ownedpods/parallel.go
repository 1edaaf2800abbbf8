package ownedpods

import "sync"

// MaxParallelWrites is how many pod writes (in-place updates, deletions) one reconcile has in
// flight at once. The pods a plan picks are already bounded by the workload's maxUnavailable,
// and each write is a round trip that waits on the apiserver, not on this process.
const MaxParallelWrites = 16

// Parallel calls f(0) ... f(n-1), at most MaxParallelWrites at a time, and waits for them all.
// f must be safe to call concurrently.
func Parallel(n int, f func(i int)) {
	sem := make(chan struct{}, MaxParallelWrites)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}()
	}
	wg.Wait()
}
