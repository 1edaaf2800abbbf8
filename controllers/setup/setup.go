package setup

import (
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Deps is what the manager hands to every controller and webhook set. The manager fills every
// field (the gates with dependencies applied, each kind's workers with the default when its flag
// is unset, the clock), so a kind package uses them as they are and defaults nothing. A
// controller's feature gates are checked by the manager, from the components table, before its
// setup is called.
type Deps struct {
	// Gates are the parsed --feature-gates, dependencies applied.
	Gates featuregate.FeatureGate
	// Workers returns the --<kind>-workers count for a lower-case kind, e.g. "cloneset".
	Workers func(kind string) int
	// Namespace restricts watches (--namespace); empty means every namespace.
	Namespace string
	// DaemonConfigNamespace is where pull secrets are copied for kruise-daemon
	// (--daemon-config-namespace); empty means the controller's default.
	DaemonConfigNamespace string
	// ManagerNamespace is the manager's own namespace (POD_NAMESPACE), where objects of
	// cluster-scoped kinds that must live in a namespace are kept (a SidecarSet's
	// ControllerRevisions, say).
	ManagerNamespace string
	// Clock is the manager's clock; tests pass a fake one.
	Clock clock.Clock
	// AssignBroadcastJobPodsByScheduler is --assign-bcj-pods-by-scheduler: BroadcastJob pods
	// get a node affinity to their node instead of spec.nodeName.
	AssignBroadcastJobPodsByScheduler bool
	// DistributionCheckAuthorRights is --resourcedistribution-check-author-rights: the
	// ResourceDistribution webhook admits a spec only from a user who may create and update the
	// resource's kind in every namespace it targets.
	DistributionCheckAuthorRights bool
	// DistributionExcludedNamespaces is --resourcedistribution-excluded-namespaces: namespaces
	// no ResourceDistribution copies into, whatever its targets say.
	DistributionExcludedNamespaces []string
	// DeletionAllowedInTerminatingNamespace is
	// --deletion-protection-allow-in-terminating-namespace: a protected object may be deleted
	// once its namespace is being deleted.
	DeletionAllowedInTerminatingNamespace bool
	// CloneSetScalingExcludePreparingDelete is --cloneset-scaling-exclude-preparing-delete: every
	// CloneSet leaves PreparingDelete pods out of its replica count, as the CloneSet label
	// apps.kruise.io/cloneset-scaling-exclude-preparing-delete does for one.
	CloneSetScalingExcludePreparingDelete bool
}

// Controller registers one controller with mgr. Controllers run only on the leader.
type Controller func(mgr ctrl.Manager, d Deps) error

// Webhooks returns admission handlers keyed by their canonical 1.8 path, e.g.
// "/mutate-apps-kruise-io-v1alpha1-cloneset". The manager serves each under every form of the
// path and measures its latency. Webhooks run on every replica.
type Webhooks func(mgr ctrl.Manager, d Deps) map[string]admission.Handler
