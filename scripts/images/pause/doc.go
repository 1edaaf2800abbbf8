// Command pause blocks until SIGTERM or SIGINT and then exits 0. It is the sandbox (pause)
// image of the end-to-end cluster and, with a version file beside it, its sample workload. Run as
// `exists <file>` it exits 0 when the file is there and 1 when not: the e2e exec probe.
//
// It imports only the standard library.
package main
