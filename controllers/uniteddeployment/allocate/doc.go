// Package allocate decides how many replicas each subset of a UnitedDeployment runs. Replicas is
// a pure function of the spec (replicas, topology.subsets, scheduleStrategy) and of what each
// subset workload holds now; it makes no API call and reads no clock.
//
// Two allocators, chosen by the spec as 1.8 chooses them:
//   - fixed: subsets with replicas (an int or a percentage of spec.replicas) get that many; the
//     rest is split evenly over the subsets without a value, the remainder going to the subsets
//     that already run the most;
//   - elastic (any subset sets minReplicas or maxReplicas): every subset's minimum is filled in
//     subset order, then every maximum in subset order until spec.replicas is reached. With
//     the Adaptive schedule strategy a subset marked unschedulable is capped at the pods it
//     runs (replicas less its timed-out pending pods), so those replicas move on to the next
//     subsets; a schedulable subset keeps the pods it runs, up to its maximum.
//
// It imports only the API types and the API machinery.
package allocate
