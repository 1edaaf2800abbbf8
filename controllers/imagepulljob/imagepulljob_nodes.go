package imagepulljob

import (
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// selectNodeImages returns, sorted by name, the NodeImages the job pulls on:
//   - with spec.podSelector, those of the nodes running an active pod it matches (pods are the
//     job's namespace's pods);
//   - with spec.selector.names, those names that have a NodeImage;
//   - with a spec.selector label selector, those whose labels (copied from the Node) match;
//   - with neither, all of them.
func selectNodeImages(job *appsv1alpha1.ImagePullJob, all []appsv1alpha1.NodeImage, pods []corev1.Pod) ([]*appsv1alpha1.NodeImage, error) {
	var match func(ni *appsv1alpha1.NodeImage) bool
	switch {
	case job.Spec.PodSelector != nil:
		sel, err := metav1.LabelSelectorAsSelector(&job.Spec.PodSelector.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("parse podSelector: %w", err)
		}
		nodes := map[string]bool{}
		for i := range pods {
			p := &pods[i]
			if p.Spec.NodeName != "" && podActive(p) && sel.Matches(labels.Set(p.Labels)) {
				nodes[p.Spec.NodeName] = true
			}
		}
		match = func(ni *appsv1alpha1.NodeImage) bool { return nodes[ni.Name] }
	case job.Spec.Selector == nil:
		match = func(*appsv1alpha1.NodeImage) bool { return true }
	case job.Spec.Selector.Names != nil:
		names := job.Spec.Selector.Names
		match = func(ni *appsv1alpha1.NodeImage) bool { return slices.Contains(names, ni.Name) }
	default:
		sel, err := metav1.LabelSelectorAsSelector(&job.Spec.Selector.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("parse selector: %w", err)
		}
		match = func(ni *appsv1alpha1.NodeImage) bool { return sel.Matches(labels.Set(ni.Labels)) }
	}
	var out []*appsv1alpha1.NodeImage
	for i := range all {
		ni := &all[i]
		if ni.DeletionTimestamp == nil && match(ni) {
			out = append(out, ni)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// podActive is a pod that is neither finished nor being deleted.
func podActive(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}
