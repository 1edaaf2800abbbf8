// Package uniteddeployment proves the UnitedDeployment controller and webhooks against the real
// kube-apiserver, kube-scheduler and kube-controller-manager (for the apps/v1 StatefulSet and
// Deployment subsets, the garbage collector and the HPA), with simulated nodes in three zones of
// ample room and one small zone that fills up: fixed and elastic allocation, scaling that
// follows the allocator, Adaptive rescheduling and its recovery, manual partitions, the four
// subset kinds, kubectl columns, the scale subresource and an HPA, and the status a finished
// rollout shows to a health check.
package uniteddeployment
