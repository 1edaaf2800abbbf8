// Package bench holds the benchmarks behind `make bench`. Each prints figures and, where it
// measures our code, a ratio against a baseline taken in the same run on the same control plane;
// none of them fails on a wall-clock number, because the machines are shared and noisy.
//
// The workload benchmarks run kruise-manager as its own process and explain each phase they
// time (observe_test.go): they print the apiserver writes and 409 conflicts the manager made,
// and per controller its reconciles, requeues, errors, time spent working and mean queue wait;
// and they save CPU profiles (back to back, 5 s each) and a heap profile per phase under
// bin/bench (or $BENCH_OUT). Read one phase with
// `go tool pprof -top bin/bench/cloneset-inplace-cpu-*.pb.gz`.
package bench
