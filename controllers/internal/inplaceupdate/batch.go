package inplaceupdate

import (
	"sort"

	"k8s.io/utils/ptr"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
)

// batch is what one write of an in-place update changes when containers have a launch
// priority, and what it leaves for the writes after it.
type batch struct {
	// Containers names the containers changed now, sorted.
	Containers []string
	// Images are the images set now, by container name.
	Images map[string]string
	// RefMetadata are the labels and annotations set now, by the container that reads them
	// through env.
	RefMetadata map[string]metav1.ObjectMeta
	// Resources are the cpu and memory requests and limits resized now, by container name.
	Resources map[string]corev1.ResourceRequirements
	// NextImages, NextRefMetadata and NextResources wait for a later batch.
	NextImages      map[string]string
	NextRefMetadata map[string]metav1.ObjectMeta
	NextResources   map[string]corev1.ResourceRequirements
}

// planBatch splits the changes of an in-place update (new images, env-read metadata and new
// resources, by container) into the batch to write now and the rest. A changed container without a launch
// priority (apps.kruise.io/container-launch-priority or KRUISE_CONTAINER_PRIORITY, read through
// the barrier env the pod webhook gave it) goes now, with the changed containers of the highest
// priority; the others wait. A label or annotation read by a container going now is set now, so
// every other container that reads it goes now as well, and so on for what those read.
func planBatch(containers []corev1.Container, images map[string]string, refMeta map[string]metav1.ObjectMeta, resources map[string]corev1.ResourceRequirements) batch {
	now := map[string]bool{}
	var top []string
	var topPriority int
	for i := range containers {
		c := &containers[i]
		_, image := images[c.Name]
		_, meta := refMeta[c.Name]
		_, resize := resources[c.Name]
		if !image && !meta && !resize {
			continue
		}
		p, ok := appspub.ContainerLaunchPriority(c)
		switch {
		case !ok:
			now[c.Name] = true
		case top == nil || p > topPriority:
			top, topPriority = []string{c.Name}, p
		case p == topPriority:
			top = append(top, c.Name)
		}
	}
	for _, name := range top {
		now[name] = true
	}
	addSharedMetadataReaders(now, refMeta)

	b := batch{Containers: []string{}}
	for name := range now {
		b.Containers = append(b.Containers, name)
	}
	sort.Strings(b.Containers)
	for name, image := range images {
		if now[name] {
			b.Images = put(b.Images, name, image)
		} else {
			b.NextImages = put(b.NextImages, name, image)
		}
	}
	for name, meta := range refMeta {
		if now[name] {
			b.RefMetadata = put(b.RefMetadata, name, meta)
		} else {
			b.NextRefMetadata = put(b.NextRefMetadata, name, meta)
		}
	}
	for name, r := range resources {
		if now[name] {
			b.Resources = put(b.Resources, name, r)
		} else {
			b.NextResources = put(b.NextResources, name, r)
		}
	}
	return b
}

// addSharedMetadataReaders adds to now every container that reads a label or annotation that a
// container in now reads, until no more join.
func addSharedMetadataReaders(now map[string]bool, refMeta map[string]metav1.ObjectMeta) {
	for grew := true; grew; {
		grew = false
		labels, annotations := map[string]bool{}, map[string]bool{}
		for name := range now {
			for k := range refMeta[name].Labels {
				labels[k] = true
			}
			for k := range refMeta[name].Annotations {
				annotations[k] = true
			}
		}
		for name, meta := range refMeta {
			if !now[name] && (sharesKey(meta.Labels, labels) || sharesKey(meta.Annotations, annotations)) {
				now[name] = true
				grew = true
			}
		}
	}
}

func sharesKey(m map[string]string, keys map[string]bool) bool {
	for k := range m {
		if keys[k] {
			return true
		}
	}
	return false
}

func put[K comparable, V any](m map[K]V, k K, v V) map[K]V {
	if m == nil {
		m = map[K]V{}
	}
	m[k] = v
	return m
}

// hasNext tells an in-place update that still has containers to change in a later batch.
func hasNext(state *appspub.InPlaceUpdateState) bool {
	return len(state.NextContainerImages) > 0 || len(state.NextContainerRefMetadata) > 0 || len(state.NextContainerResources) > 0
}

// readyForNext tells whether the containers the last batch changed are ready, the check 1.8
// makes (PreCheckBeforeNext) before it writes the next batch.
func readyForNext(pod *corev1.Pod, check *appspub.InPlaceUpdatePreCheckBeforeNext) bool {
	if check == nil {
		return true
	}
	ready := map[string]bool{}
	for _, cs := range pod.Status.ContainerStatuses {
		ready[cs.Name] = cs.Ready
	}
	for _, name := range check.ContainersRequiredReady {
		if !ready[name] {
			return false
		}
	}
	return true
}

// record writes batch b into state: the image IDs the containers it changes run now, what
// waits, the check before the next batch and the batch itself.
func (b batch) record(pod *corev1.Pod, state *appspub.InPlaceUpdateState, now metav1.Time) {
	if state.LastContainerStatuses == nil {
		state.LastContainerStatuses = map[string]appspub.InPlaceUpdateContainerStatus{}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if _, ok := b.Images[cs.Name]; !ok {
			continue
		}
		if _, seen := state.LastContainerStatuses[cs.Name]; !seen {
			state.LastContainerStatuses[cs.Name] = appspub.InPlaceUpdateContainerStatus{ImageID: cs.ImageID}
		}
	}
	state.NextContainerImages, state.NextContainerRefMetadata, state.NextContainerResources = b.NextImages, b.NextRefMetadata, b.NextResources
	state.PreCheckBeforeNext = nil
	if hasNext(state) {
		state.PreCheckBeforeNext = &appspub.InPlaceUpdatePreCheckBeforeNext{ContainersRequiredReady: b.Containers}
	}
	state.ContainerBatchesRecord = append(state.ContainerBatchesRecord, appspub.InPlaceUpdateContainerBatch{Timestamp: now, Containers: b.Containers})
}

// addRefMetadata adds to c the labels and annotations the batch's containers read.
func (b batch) addRefMetadata(c change) {
	for _, meta := range b.RefMetadata {
		for k, v := range meta.Labels {
			c.Labels[k] = ptr.To(v)
		}
		for k, v := range meta.Annotations {
			c.Annotations[k] = ptr.To(v)
		}
	}
}
