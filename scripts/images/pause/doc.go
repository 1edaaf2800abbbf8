// Command pause blocks until SIGTERM or SIGINT and then exits 0. It is the sandbox (pause)
// image of the end-to-end cluster and, with a version file beside it, its sample workload.
//
// It imports only the standard library.
package main
