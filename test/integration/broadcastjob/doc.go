// Package broadcastjob proves the BroadcastJob controller and webhooks, and AdvancedCronJob's
// broadcastJobTemplate, against the real kube-apiserver: the manager runs in process, four
// simulated nodes (one of them tainted) run the pods, and the simulator's scheduler binds them
// by the node affinity the controller gives each pod.
package broadcastjob
