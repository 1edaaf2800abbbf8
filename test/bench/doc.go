// Package bench holds the benchmarks behind `make bench`. Each prints figures and, where it
// measures our code, a ratio against a baseline taken in the same run on the same control plane;
// none of them fails on a wall-clock number, because the machines are shared and noisy.
package bench
