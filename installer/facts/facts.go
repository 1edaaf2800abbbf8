package facts

import (
	"context"
	"fmt"
	"sort"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kruise-addon/kruise-addon/apis/kinds"
)

// Helm's ownership metadata on the objects it manages.
const (
	AnnotationReleaseName      = "meta.helm.sh/release-name"
	AnnotationReleaseNamespace = "meta.helm.sh/release-namespace"
	LabelManagedBy             = "app.kubernetes.io/managed-by"
)

// FieldManager owns what the installer writes itself: the namespace, the CRDs it applies
// server-side before an upgrade, the lock.
const FieldManager = "kruise-addon"

// ChartName is the name of the add-on's chart, and of the community one.
const ChartName = "kruise"

// ManagerDeployment is the manager's Deployment name, ours and the community's.
const ManagerDeployment = "kruise-controller-manager"

// ManagerLease is the Lease the manager elects its leader with, in its namespace.
const ManagerLease = "kruise-manager"

// Node is what the installer needs about one node.
type Node struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	// Zone is the topology.kubernetes.io/zone label, "" when absent.
	Zone   string         `json:"zone,omitempty"`
	Taints []corev1.Taint `json:"taints,omitempty"`
	// Schedulable is false for cordoned nodes.
	Schedulable bool `json:"schedulable"`
	Ready       bool `json:"ready"`
	// ContainerRuntimeVersion is status.nodeInfo.containerRuntimeVersion, e.g. containerd://1.7.2.
	ContainerRuntimeVersion string `json:"containerRuntimeVersion"`
	// Allocatable is status.allocatable (cpu and memory).
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	// Requested sums the requests of the pods bound to the node that have not ended.
	Requested corev1.ResourceList `json:"requested,omitempty"`
	// ManagerRequested is the part of Requested that manager pods (label
	// control-plane=controller-manager) hold, by namespace: an upgrade replaces its own.
	ManagerRequested map[string]corev1.ResourceList `json:"managerRequested,omitempty"`
}

// Owner is a Helm release that owns an object, empty when none does.
type Owner struct {
	Release   string `json:"release,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

func (o Owner) String() string {
	if o.Release == "" {
		return "no Helm release"
	}
	return fmt.Sprintf("release %s/%s", o.Namespace, o.Release)
}

// Object is an existing object of interest and its owner.
type Object struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	Owner     Owner  `json:"owner"`
	// Terminating is set on an object being deleted (only namespaces are read for it).
	Terminating bool `json:"terminating,omitempty"`
}

// Release is the latest revision of one Helm release of the kruise chart.
type Release struct {
	Name         string `json:"name"`
	Namespace    string `json:"namespace"`
	Revision     int    `json:"revision"`
	Status       string `json:"status"`
	ChartVersion string `json:"chartVersion"`
	AppVersion   string `json:"appVersion"`
}

// Facts is the cluster as the installer saw it.
type Facts struct {
	// ServerVersion is the apiserver's gitVersion, e.g. v1.30.4-eks-a1b2c3.
	ServerVersion string    `json:"serverVersion"`
	Nodes         []Node    `json:"nodes"`
	Releases      []Release `json:"releases,omitempty"`
	// CRDs are the add-on's CRDs (apis/kinds) that exist, with their Helm owners.
	CRDs []Object `json:"crds,omitempty"`
	// Managers are Deployments named kruise-controller-manager, in any namespace.
	Managers []Object `json:"managers,omitempty"`
	// Namespaces are those of the namespaces the chart would create (the daemon config
	// namespace) that exist already, with their Helm owners; see CollectNamespaces.
	Namespaces []Object `json:"namespaces,omitempty"`
}

// Clients are what Collect reads through.
type Clients struct {
	Kube     kubernetes.Interface
	Metadata metadata.Interface
}

// Collect reads the facts. Reading releases needs list on Secrets in every namespace; without it
// the call fails rather than reporting no releases.
func Collect(ctx context.Context, c Clients) (Facts, error) {
	var f Facts
	v, err := c.Kube.Discovery().ServerVersion()
	if err != nil {
		return f, fmt.Errorf("server version: %w", err)
	}
	f.ServerVersion = v.GitVersion

	nodes, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return f, fmt.Errorf("list nodes: %w", err)
	}
	for i := range nodes.Items {
		f.Nodes = append(f.Nodes, NodeFrom(&nodes.Items[i]))
	}
	if err := collectRequests(ctx, c.Kube, f.Nodes); err != nil {
		return f, err
	}

	rels, err := driver.NewSecrets(c.Kube.CoreV1().Secrets("")).List(func(r *release.Release) bool {
		return r.Chart != nil && r.Chart.Metadata != nil && r.Chart.Metadata.Name == ChartName
	})
	if err != nil {
		return f, fmt.Errorf("list helm releases: %w", err)
	}
	f.Releases = latest(rels)

	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crds, err := c.Metadata.Resource(crdGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return f, fmt.Errorf("list crds: %w", err)
	}
	for _, crd := range crds.Items {
		// Only the add-on's own CRDs: other products of the kruise API family (e.g.
		// rollouts.kruise.io, game.kruise.io) are neither ours nor a foreign installation of ours.
		if kinds.IsOurCRD(crd.Name) {
			f.CRDs = append(f.CRDs, Object{Name: crd.Name, Owner: OwnerOf(crd.Annotations)})
		}
	}
	sort.Slice(f.CRDs, func(i, j int) bool { return f.CRDs[i].Name < f.CRDs[j].Name })

	deps, err := c.Kube.AppsV1().Deployments("").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + ManagerDeployment})
	if err != nil {
		return f, fmt.Errorf("list deployments: %w", err)
	}
	for _, d := range deps.Items {
		f.Managers = append(f.Managers, Object{Name: d.Name, Namespace: d.Namespace, Owner: OwnerOf(d.Annotations)})
	}
	return f, nil
}

// CollectNamespaces reads which of names exist, with their Helm owners, sorted by name. A
// namespace that does not exist is left out.
func CollectNamespaces(ctx context.Context, kube kubernetes.Interface, names ...string) ([]Object, error) {
	var out []Object
	seen := map[string]bool{}
	for _, name := range names {
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		ns, err := kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("get namespace %s: %w", name, err)
		}
		out = append(out, Object{Name: ns.Name, Owner: OwnerOf(ns.Annotations), Terminating: ns.DeletionTimestamp != nil})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Namespace returns the existing namespace of that name, from Namespaces.
func (f Facts) Namespace(name string) (Object, bool) {
	for _, ns := range f.Namespaces {
		if ns.Name == name {
			return ns, true
		}
	}
	return Object{}, false
}

// ManagerPodLabel marks the manager's pods.
const ManagerPodLabel, ManagerPodLabelValue = "control-plane", "controller-manager"

// collectRequests adds up, per node, the requests of the pods bound to it that have not ended,
// as the scheduler counts them (init containers and overhead included), a page at a time.
func collectRequests(ctx context.Context, kube kubernetes.Interface, nodes []Node) error {
	byName := map[string]*Node{}
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	opts := metav1.ListOptions{FieldSelector: "status.phase!=Succeeded,status.phase!=Failed", Limit: 500}
	for {
		pods, err := kube.CoreV1().Pods("").List(ctx, opts)
		if err != nil {
			return fmt.Errorf("list pods: %w", err)
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			n := byName[p.Spec.NodeName]
			if n == nil {
				continue
			}
			AddPodRequests(n, p)
		}
		if pods.Continue == "" {
			return nil
		}
		opts.Continue = pods.Continue
	}
}

// AddPodRequests counts pod's requests on n.
func AddPodRequests(n *Node, pod *corev1.Pod) {
	req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	n.Requested = addResources(n.Requested, req)
	if pod.Labels[ManagerPodLabel] == ManagerPodLabelValue {
		if n.ManagerRequested == nil {
			n.ManagerRequested = map[string]corev1.ResourceList{}
		}
		n.ManagerRequested[pod.Namespace] = addResources(n.ManagerRequested[pod.Namespace], req)
	}
}

func addResources(to, more corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		q := to[name].DeepCopy()
		q.Add(more[name])
		out[name] = q
	}
	return out
}

// NodeFrom reduces a Node to the facts the installer uses.
func NodeFrom(n *corev1.Node) Node {
	out := Node{
		Name:                    n.Name,
		Labels:                  n.Labels,
		Zone:                    n.Labels[corev1.LabelTopologyZone],
		Taints:                  n.Spec.Taints,
		Schedulable:             !n.Spec.Unschedulable,
		ContainerRuntimeVersion: n.Status.NodeInfo.ContainerRuntimeVersion,
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := n.Status.Allocatable[name]; ok {
			if out.Allocatable == nil {
				out.Allocatable = corev1.ResourceList{}
			}
			out.Allocatable[name] = q.DeepCopy()
		}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Ready = c.Status == corev1.ConditionTrue
		}
	}
	return out
}

// OwnerOf reads Helm's ownership annotations.
func OwnerOf(annotations map[string]string) Owner {
	return Owner{Release: annotations[AnnotationReleaseName], Namespace: annotations[AnnotationReleaseNamespace]}
}

// latest keeps the newest revision of each release, sorted by namespace and name.
func latest(rels []*release.Release) []Release {
	byKey := map[string]*release.Release{}
	for _, r := range rels {
		k := r.Namespace + "/" + r.Name
		if cur, ok := byKey[k]; !ok || r.Version > cur.Version {
			byKey[k] = r
		}
	}
	var out []Release
	for _, r := range byKey {
		rel := Release{Name: r.Name, Namespace: r.Namespace, Revision: r.Version, ChartVersion: r.Chart.Metadata.Version, AppVersion: r.Chart.Metadata.AppVersion}
		if r.Info != nil {
			rel.Status = r.Info.Status.String()
		}
		out = append(out, rel)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// NodeCount is the number of nodes.
func (f Facts) NodeCount() int { return len(f.Nodes) }

// Release returns the release with that name and namespace.
func (f Facts) Release(name, namespace string) (Release, bool) {
	for _, r := range f.Releases {
		if r.Name == name && r.Namespace == namespace {
			return r, true
		}
	}
	return Release{}, false
}
