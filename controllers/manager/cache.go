package manager

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/apis/kinds"
)

// lastAppliedAnnotation is where `kubectl apply` keeps the whole object it applied.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// cacheOptions are the informer cache's options: the sync period, the watched namespace, and
// transforms that drop, before an object is stored, what no controller or webhook reads:
//   - every object's managedFields; on a pod they are often the largest part of its metadata;
//   - a CustomResourceDefinition's schemas and last-applied annotation: only the caBundle
//     patcher reads CRDs, for their names and spec.conversion, yet every CRD of the cluster is
//     cached, and a schema with an embedded pod template runs to hundreds of kilobytes;
//   - a Node's status.images, the node's whole image list (up to 50 entries with every tag
//     and digest): node readers look at labels, taints, conditions and allocatable only;
//   - the data of a ControllerRevision that no kind of ours controls (a native StatefulSet's
//     or DaemonSet's): every revision reader keeps only those its own workload controls.
//
// An update of an object read from the cache leaves a dropped field as the apiserver has it:
// CRDs are only ever patched, with a patch computed between two copies that both lack what
// was dropped; Nodes and foreign revisions are never written.
func (o *Options) cacheOptions() cache.Options {
	opts := cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&apiextensionsv1.CustomResourceDefinition{}: {Transform: stripManagedFieldsAnd(trimCRD)},
			&corev1.Node{}:               {Transform: stripManagedFieldsAnd(trimNode)},
			&appsv1.ControllerRevision{}: {Transform: stripManagedFieldsAnd(trimForeignRevision)},
		},
	}
	if o.SyncPeriod > 0 {
		opts.SyncPeriod = ptr.To(o.SyncPeriod)
	}
	if o.Namespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{o.Namespace: {}}
	}
	return opts
}

// restConfig is cfg with the manager's client rate limits, asking for uncompressed responses:
// the apiserver would otherwise gzip every watch stream, and each of the manager's few dozen
// watches would hold a decompressor with its 32 KiB window for its whole life, besides the CPU
// both ends spend on compression, over what is normally the cluster's own network.
func (o *Options) restConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	cfg.DisableCompression = true
	return cfg
}

// stripManagedFieldsAnd is the default transform followed by trim, for a kind whose own
// transform replaces the default.
func stripManagedFieldsAnd[T client.Object](trim func(T)) toolscache.TransformFunc {
	strip := cache.TransformStripManagedFields()
	return func(in any) (any, error) {
		out, err := strip(in)
		if err != nil {
			return nil, err
		}
		if obj, ok := out.(T); ok {
			trim(obj)
		}
		return out, nil
	}
}

func trimCRD(crd *apiextensionsv1.CustomResourceDefinition) {
	for i := range crd.Spec.Versions {
		crd.Spec.Versions[i].Schema = nil
	}
	delete(crd.Annotations, lastAppliedAnnotation)
}

func trimNode(node *corev1.Node) { node.Status.Images = nil }

func trimForeignRevision(rev *appsv1.ControllerRevision) {
	ref := metav1.GetControllerOf(rev)
	if ref != nil {
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil && (gv.Group == kinds.AppsGroup || gv.Group == kinds.PolicyGroup) {
			return
		}
	}
	rev.Data = runtime.RawExtension{}
}
