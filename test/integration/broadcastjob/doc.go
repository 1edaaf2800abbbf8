// Package broadcastjob proves the BroadcastJob controller and webhooks, AdvancedCronJob's
// broadcastJobTemplate and webhook, and the EphemeralJob controller and webhook against the real
// kube-apiserver. The
// manager runs in process; four simulated nodes (one of them tainted) run the BroadcastJob
// pods, and the simulator's scheduler binds them by the node affinity the controller gives each
// pod. EphemeralJob's target pods are bound to a node no kubelet serves, and the tests write
// their containers' statuses as a kubelet would.
package broadcastjob
