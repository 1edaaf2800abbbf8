// Command registry serves an in-memory OCI registry on a loopback address for the end-to-end
// cluster. It keeps every blob and manifest in memory, so nothing outlives the process, and it
// writes the address it listens on to -addr-file once it accepts connections.
//
// It imports only go-containerregistry's registry package and the standard library.
package main
