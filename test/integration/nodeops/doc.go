// Package nodeops proves the manager side of node operations on a real apiserver with
// simulated nodes: the ContainerRecreateRequest webhook and controller (the tests play
// kruise-daemon by writing the per-container states) and the AdvancedCronJob controller on a
// fake clock the tests step.
package nodeops
