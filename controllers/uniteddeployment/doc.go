// Package uniteddeployment is the UnitedDeployment controller. A UnitedDeployment runs one
// application as one workload per subset of spec.topology.subsets (a zone or node pool): a
// CloneSet, an Advanced StatefulSet, an apps/v1 StatefulSet or a Deployment, whichever
// spec.template names, each a row of one generic adapter that says only what the kind does
// differently (subsetKind in uniteddeployment_adapter.go).
//
// Each subset workload is named <ud>-<subset>-<random>, labelled apps.kruise.io/subset-name and
// apps.kruise.io/controller-revision-hash (the UnitedDeployment's revision), annotated
// apps.kruise.io/subset-patch, and controlled by the UnitedDeployment. Its pod template is the
// UnitedDeployment's with the subset's nodeSelectorTerm ANDed into the required node affinity,
// its tolerations appended and its patch merged in.
//
// Each reconcile reads the subset workloads, their pods and the revisions into a scope, plans
// (decide: a pure function of the scope and the time) what to create, update and delete, with
// each subset's replicas from the allocate package and its partition from
// updateStrategy.manualUpdate.partitions, applies the plan and writes the status once. With the
// Adaptive schedule strategy the plan marks a subset unschedulable (its Schedulable condition
// False) when its pods stayed unschedulable for rescheduleCriticalSeconds, so the allocator moves
// those replicas to the next subsets, and tries it again after unschedulableLastSeconds; the
// reconcile is requeued for those moments from the injected clock.
//
// It imports the shared machinery in controllers/internal, the allocate package and the API
// types; it must not import another controller package (`controllers/...` other than
// `controllers/internal/...`, `controllers/setup` and `controllers/uniteddeployment/allocate`).
package uniteddeployment
