package kinds

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// API groups of the add-on.
const (
	AppsGroup   = "apps.kruise.io"
	PolicyGroup = "policy.kruise.io"
)

// Kind is one kind the add-on serves, with the CRD that defines it.
type Kind struct {
	// Group is the API group, e.g. apps.kruise.io.
	Group string
	// Kind is the API kind, e.g. CloneSet.
	Kind string
	// Resource is the plural resource name, e.g. clonesets.
	Resource string
	// Versions are the served versions, storage version first.
	Versions []string
	// Namespaced is false for cluster-scoped kinds such as SidecarSet.
	Namespaced bool
	// UserCreated is false for the kinds the manager makes per node (NodeImage,
	// NodePodProbe): they go with their nodes, and the uninstall gate never counts them.
	UserCreated bool
	// Finalizers are the finalizers the manager puts on the kind's objects and alone removes:
	// while no manager runs, an object of the kind that is deleted waits for one.
	Finalizers []string
}

// The manager's finalizers on users' objects. The values are the wire names 1.8 uses.
const (
	// ImagePullJobFinalizer holds an ImagePullJob until its pull-secret copies are released.
	ImagePullJobFinalizer = "apps.kruise.io/deletion-protection"
	// PodProbeMarkerFinalizer holds a PodProbeMarker until its probes are out of every NodePodProbe.
	PodProbeMarkerFinalizer = "kruise.io/node-pod-probe-cleanup"
	// ContainerRecreateRequestFinalizer holds a ContainerRecreateRequest while it keeps its pod
	// not ready (the unready-acquired key of apps/v1alpha1).
	ContainerRecreateRequestFinalizer = "crr.apps.kruise.io/unready-acquired"
)

// CRDName is the name of the kind's CRD, <resource>.<group>.
func (k Kind) CRDName() string { return k.Resource + "." + k.Group }

// StorageVersion is the version objects are stored in.
func (k Kind) StorageVersion() string { return k.Versions[0] }

// GVR is the kind's resource at its storage version.
func (k Kind) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: k.Group, Version: k.StorageVersion(), Resource: k.Resource}
}

// GVRs are the kind's resource at every served version, storage version first.
func (k Kind) GVRs() []schema.GroupVersionResource {
	out := make([]schema.GroupVersionResource, 0, len(k.Versions))
	for _, v := range k.Versions {
		out = append(out, schema.GroupVersionResource{Group: k.Group, Version: v, Resource: k.Resource})
	}
	return out
}

// GroupKind is the kind's group and kind.
func (k Kind) GroupKind() schema.GroupKind { return schema.GroupKind{Group: k.Group, Kind: k.Kind} }

// All lists every kind the add-on serves, one per CRD, sorted by CRD name within each group.
// It returns a new slice on every call, so callers may keep or change it.
func All() []Kind {
	apps := func(kind, resource string, namespaced, user bool, versions ...string) Kind {
		return Kind{Group: AppsGroup, Kind: kind, Resource: resource, Versions: versions, Namespaced: namespaced, UserCreated: user}
	}
	const namespaced, cluster = true, false
	const user, controllerMade = true, false
	finalizer := func(k Kind, f string) Kind { k.Finalizers = []string{f}; return k }
	return []Kind{
		apps("AdvancedCronJob", "advancedcronjobs", namespaced, user, "v1alpha1"),
		apps("BroadcastJob", "broadcastjobs", namespaced, user, "v1alpha1"),
		apps("CloneSet", "clonesets", namespaced, user, "v1alpha1"),
		finalizer(apps("ContainerRecreateRequest", "containerrecreaterequests", namespaced, user, "v1alpha1"), ContainerRecreateRequestFinalizer),
		apps("DaemonSet", "daemonsets", namespaced, user, "v1alpha1"),
		apps("EphemeralJob", "ephemeraljobs", namespaced, user, "v1alpha1"),
		apps("ImageListPullJob", "imagelistpulljobs", namespaced, user, "v1alpha1"),
		finalizer(apps("ImagePullJob", "imagepulljobs", namespaced, user, "v1alpha1"), ImagePullJobFinalizer),
		apps("NodeImage", "nodeimages", cluster, controllerMade, "v1alpha1"),
		apps("NodePodProbe", "nodepodprobes", cluster, controllerMade, "v1alpha1"),
		apps("PersistentPodState", "persistentpodstates", namespaced, user, "v1alpha1"),
		finalizer(apps("PodProbeMarker", "podprobemarkers", namespaced, user, "v1alpha1"), PodProbeMarkerFinalizer),
		apps("ResourceDistribution", "resourcedistributions", cluster, user, "v1alpha1"),
		apps("SidecarSet", "sidecarsets", cluster, user, "v1alpha1"),
		// v1beta1 is the storage version; v1alpha1 is still served.
		apps("StatefulSet", "statefulsets", namespaced, user, "v1beta1", "v1alpha1"),
		apps("UnitedDeployment", "uniteddeployments", namespaced, user, "v1alpha1"),
		apps("WorkloadSpread", "workloadspreads", namespaced, user, "v1alpha1"),
		{Group: PolicyGroup, Kind: "PodUnavailableBudget", Resource: "podunavailablebudgets", Versions: []string{"v1alpha1"}, Namespaced: true, UserCreated: true},
	}
}

// UserCreated lists the kinds users create: every kind but the per-node ones the manager makes.
func UserCreated() []Kind {
	var out []Kind
	for _, k := range All() {
		if k.UserCreated {
			out = append(out, k)
		}
	}
	return out
}

// CRDNames lists the names of the add-on's CRDs, in All order.
func CRDNames() []string {
	ks := All()
	out := make([]string, 0, len(ks))
	for _, k := range ks {
		out = append(out, k.CRDName())
	}
	return out
}

// IsOurCRD reports whether a CRD of that name is one of the add-on's. A name in one of our
// groups' family (e.g. rollouts.kruise.io) is not ours unless listed.
func IsOurCRD(name string) bool {
	_, ok := ByCRDName(name)
	return ok
}

// ByCRDName returns the kind whose CRD has that name.
func ByCRDName(name string) (Kind, bool) {
	for _, k := range All() {
		if k.CRDName() == name {
			return k, true
		}
	}
	return Kind{}, false
}
