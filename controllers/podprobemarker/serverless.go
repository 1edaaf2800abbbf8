package podprobemarker

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podadmission"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podcondition"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/features"
)

// Serverless pods (on a node labelled type=virtual-kubelet) have no kruise-daemon. With the
// EnablePodProbeMarkerOnServerless gate, as in 1.8, the pod webhook writes the probes that apply
// to a new pod into its kruise.io/podprobe annotation, the serverless platform runs them and
// writes each result into the probe's podConditionType condition, and the controller turns
// those conditions into the markerPolicy's labels and annotations.

// ForPod returns the PodProbeMarkers of pod: the ones its kruise.io/podprobemarker-list
// annotation names (a name that cannot be read is left out), or else the markers of its
// namespace whose selector matches its labels (an empty selector matches nothing).
func ForPod(ctx context.Context, c client.Reader, pod *corev1.Pod) ([]*appsv1alpha1.PodProbeMarker, error) {
	var out []*appsv1alpha1.PodProbeMarker
	if names := pod.Annotations[appsv1alpha1.PodProbeMarkerListAnnotationKey]; names != "" {
		for _, name := range strings.Split(names, ",") {
			ppm := &appsv1alpha1.PodProbeMarker{}
			if err := c.Get(ctx, types.NamespacedName{Namespace: pod.Namespace, Name: name}, ppm); err != nil {
				ctrl.LoggerFrom(ctx).V(2).Info("PodProbeMarker named by the pod cannot be read", "pod", klog.KObj(pod),
					"PodProbeMarker", klog.KRef(pod.Namespace, name), "err", err.Error())
				continue
			}
			out = append(out, ppm)
		}
		return out, nil
	}
	list := &appsv1alpha1.PodProbeMarkerList{}
	if err := c.List(ctx, list, client.InNamespace(pod.Namespace)); err != nil {
		return nil, fmt.Errorf("list podprobemarkers: %w", err)
	}
	for i := range list.Items {
		sel, err := metav1.LabelSelectorAsSelector(list.Items[i].Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// ServerlessProbes returns the probes of ppms that a serverless platform runs for pod, without
// their markerPolicy, and the sorted names of the markers they come from. A probe is left out
// when it has no podConditionType (its result would have nowhere to go), when its container is
// not one of the pod's containers or restartable init containers, or when an earlier probe has
// its condition type or its container and name.
func ServerlessProbes(pod *corev1.Pod, ppms []*appsv1alpha1.PodProbeMarker) ([]appsv1alpha1.PodContainerProbe, []string) {
	containers := map[string]bool{}
	for _, c := range pod.Spec.Containers {
		containers[c.Name] = true
	}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			containers[c.Name] = true
		}
	}
	conditions, keys := map[string]bool{}, map[string]bool{}
	var probes []appsv1alpha1.PodContainerProbe
	var names []string
	for _, ppm := range ppms {
		for _, p := range ppm.Spec.Probes {
			key := p.ContainerName + "/" + p.Name
			if p.PodConditionType == "" || conditions[p.PodConditionType] || keys[key] || !containers[p.ContainerName] {
				continue
			}
			conditions[p.PodConditionType], keys[key] = true, true
			p = *p.DeepCopy()
			p.MarkerPolicy = nil
			probes = append(probes, p)
			if !slices.Contains(names, ppm.Name) {
				names = append(names, ppm.Name)
			}
		}
	}
	slices.Sort(names)
	return probes, names
}

// ServerlessStepFactory builds the /mutate-pod step that writes the kruise.io/podprobe and
// kruise.io/podprobemarker-list annotations; nil while EnablePodProbeMarkerOnServerless is off.
func ServerlessStepFactory(mgr ctrl.Manager, d setup.Deps) podadmission.Step {
	if !d.Gates.Enabled(features.EnablePodProbeMarkerOnServerless) {
		return nil
	}
	return &ServerlessStep{Reader: mgr.GetClient()}
}

// ServerlessStep is PodProbeMarker's /mutate-pod step. Like 1.8's it annotates every new pod
// the markers select, serverless or not: the node is not known at creation.
type ServerlessStep struct {
	// Reader reads PodProbeMarkers.
	Reader client.Reader
}

// Name names the step.
func (*ServerlessStep) Name() string { return "podprobemarker" }

// Mutate writes the probes of ServerlessProbes into the pod's annotations.
func (s *ServerlessStep) Mutate(ctx context.Context, _ admission.Request, pod *corev1.Pod) (bool, error) {
	ppms, err := ForPod(ctx, s.Reader, pod)
	if err != nil {
		return false, err
	}
	probes, names := ServerlessProbes(pod, ppms)
	if len(probes) == 0 {
		return false, nil
	}
	if err := podadmission.AnnotateJSON(pod, appsv1alpha1.PodProbeMarkerAnnotationKey, probes); err != nil {
		return false, err
	}
	pod.Annotations[appsv1alpha1.PodProbeMarkerListAnnotationKey] = strings.Join(names, ",")
	ctrl.LoggerFrom(ctx).V(3).Info("Wrote the probes of the pod's PodProbeMarkers into its annotations", "pod", klog.KObj(pod), "markers", names)
	return true, nil
}

// ServerlessMarks returns the labels and annotations ppm's markerPolicy asks of a serverless
// pod from the conditions the platform wrote: for each probe with a podConditionType and a
// markerPolicy, the policy whose state matches the condition (Succeeded for True, Failed for
// False, Unknown otherwise) has its labels and annotations set. As in 1.8 nothing is taken off
// when the state changes, and a probe whose condition is not there yet changes nothing. Only
// what differs from the pod is returned.
func ServerlessMarks(pod *corev1.Pod, ppm *appsv1alpha1.PodProbeMarker) (wantLabels, wantAnnotations map[string]*string) {
	wantLabels, wantAnnotations = map[string]*string{}, map[string]*string{}
	set := func(out map[string]*string, cur map[string]string, k, v string) {
		if old, has := cur[k]; !has || old != v {
			out[k] = &v
		}
	}
	for _, p := range ppm.Spec.Probes {
		if p.PodConditionType == "" || len(p.MarkerPolicy) == 0 {
			continue
		}
		c := podcondition.Get(pod, corev1.PodConditionType(p.PodConditionType))
		if c == nil {
			continue
		}
		for _, policy := range p.MarkerPolicy {
			if policy.State != stateOf(c.Status) {
				continue
			}
			for k, v := range policy.Labels {
				set(wantLabels, pod.Labels, k, v)
			}
			for k, v := range policy.Annotations {
				set(wantAnnotations, pod.Annotations, k, v)
			}
		}
	}
	return wantLabels, wantAnnotations
}

// stateOf is the probe state a condition status reports.
func stateOf(s corev1.ConditionStatus) appsv1alpha1.ProbeState {
	switch s {
	case corev1.ConditionTrue:
		return appsv1alpha1.ProbeSucceeded
	case corev1.ConditionFalse:
		return appsv1alpha1.ProbeFailed
	}
	return appsv1alpha1.ProbeUnknown
}

// markServerless writes ServerlessMarks of each serverless pod.
func (r *Reconciler) markServerless(ctx context.Context, ppm *appsv1alpha1.PodProbeMarker, pods []*corev1.Pod) error {
	for _, pod := range pods {
		wantLabels, wantAnnotations := ServerlessMarks(pod, ppm)
		if len(wantLabels) == 0 && len(wantAnnotations) == 0 {
			continue
		}
		if err := kit.PatchMetadata(ctx, r.client, pod.DeepCopy(), wantLabels, wantAnnotations); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("mark serverless pod %s: %w", pod.Name, err)
		}
		ctrl.LoggerFrom(ctx).V(2).Info("Marked serverless pod from its probe conditions", "Pod", klog.KObj(pod))
	}
	return nil
}

// changedConditions returns the condition types of cur that old lacks or had with another
// status.
func changedConditions(old, cur *corev1.Pod) map[string]bool {
	diff := map[string]bool{}
	for _, c := range cur.Status.Conditions {
		if o := podcondition.Get(old, c.Type); o == nil || o.Status != c.Status {
			diff[string(c.Type)] = true
		}
	}
	return diff
}

// serverlessConditionKeys names the markers of a serverless pod with a probe whose condition
// type changed from old to pod; none for a pod on an ordinary node, whose conditions the
// NodePodProbe controller writes itself.
func (r *Reconciler) serverlessConditionKeys(ctx context.Context, old, pod *corev1.Pod) []client.ObjectKey {
	diff := changedConditions(old, pod)
	if len(diff) == 0 || !Probed(pod) {
		return nil
	}
	node := &corev1.Node{}
	if err := r.client.Get(ctx, types.NamespacedName{Name: pod.Spec.NodeName}, node); err != nil || !virtualKubelet(node) {
		return nil
	}
	ppms, err := ForPod(ctx, r.client, pod)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing PodProbeMarkers for a serverless pod", "pod", klog.KObj(pod))
		return nil
	}
	var keys []client.ObjectKey
	for _, ppm := range ppms {
		if slices.ContainsFunc(ppm.Spec.Probes, func(p appsv1alpha1.PodContainerProbe) bool { return diff[p.PodConditionType] }) {
			keys = append(keys, client.ObjectKeyFromObject(ppm))
		}
	}
	return keys
}

// virtualKubelet reports whether node is a serverless one.
func virtualKubelet(node *corev1.Node) bool {
	return node.Labels["type"] == appsv1alpha1.VirtualKubeletNodeType
}
