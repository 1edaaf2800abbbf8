package inject

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podadmission"
)

// Matches tells whether a SidecarSet selects a pod: its namespace (spec.namespace, or
// spec.namespaceSelector against nsLabels, the labels of the pod's namespace) and its label
// selector, which must not be empty. A pod without a namespace is in "default". The selectors
// are parsed through sels (nil parses them every time).
func Matches(pod *corev1.Pod, s *appsv1alpha1.SidecarSet, nsLabels labels.Set, sels *podadmission.Selectors) bool {
	ns := pod.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	if s.Spec.Namespace != "" && s.Spec.Namespace != ns {
		return false
	}
	if s.Spec.NamespaceSelector != nil {
		sel, err := sels.Of(s, "spec.namespaceSelector", s.Spec.NamespaceSelector)
		if err != nil || !sel.Matches(nsLabels) {
			return false
		}
	}
	sel, err := sels.Of(s, "spec.selector", s.Spec.Selector)
	if err != nil || sel.Empty() {
		return false
	}
	return sel.Matches(labels.Set(pod.Labels))
}

// Inject adds to a pod being created what the SidecarSets give it, and reports whether it
// changed the pod. sets are the revisions to inject, one per matching SidecarSet (see
// ChooseRevision); now stamps the hash annotations.
//
// For each SidecarSet, by name:
//   - patchPodMetadata is applied to the pod's annotations by its policy;
//   - init containers are added after the pod's own, in order of name; containers go before
//     or after the app containers by podInjectPolicy; a sidecar whose name the pod already
//     uses replaces that container rather than being added twice;
//   - each sidecar gets env IS_INJECTED=true, its transferEnv copied from the source
//     container, and, with shareVolumePolicy enabled, the app containers' volume mounts (and
//     the env their subPathExpr needs);
//   - the SidecarSet volumes its sidecars mount and its imagePullSecrets are added unless the
//     pod has one of that name;
//   - a HotUpgrade sidecar (a container, or a native sidecar init container) becomes the pair
//     <name>-1 (serving) and <name>-2 (empty image), with their version annotations and env;
//   - the pod records the SidecarSet in kruise.io/sidecarset-hash, -hash-without-image and
//     -injected-list.
func Inject(pod *corev1.Pod, sets []*appsv1alpha1.SidecarSet, now metav1.Time) (bool, error) {
	if len(sets) == 0 {
		return false, nil
	}
	sets = append([]*appsv1alpha1.SidecarSet(nil), sets...)
	sort.Slice(sets, func(i, j int) bool { return sets[i].Name < sets[j].Name })
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	for _, s := range sets {
		if err := PatchMetadata(pod.Annotations, s.Spec.PatchPodMetadata); err != nil {
			return false, fmt.Errorf("sidecarset %s: patch pod metadata: %w", s.Name, err)
		}
	}

	// The hash annotations are decoded once and written once, not once per SidecarSet.
	hashes, err := ReadUpgradeSpecs(pod, appsv1alpha1.SidecarSetHashAnnotation)
	if err != nil {
		return false, err
	}
	withoutImage, err := ReadUpgradeSpecs(pod, appsv1alpha1.SidecarSetHashWithoutImageAnnotation)
	if err != nil {
		return false, err
	}
	injected := map[string]bool{}
	for _, n := range InjectedList(pod) {
		injected[n] = true
	}
	working := WorkingHotUpgrade(pod)
	hot := false
	var inits, containers []appsv1alpha1.SidecarContainer
	var volumes []corev1.Volume
	var secrets []corev1.LocalObjectReference
	annotations := map[string]string{}
	for _, s := range sets {
		injected[s.Name] = true
		byName := map[string]*corev1.Volume{}
		for i := range s.Spec.Volumes {
			byName[s.Spec.Volumes[i].Name] = &s.Spec.Volumes[i]
		}
		list := map[string]bool{}
		// build injects src; pair makes a HotUpgrade sidecar the hot-upgrade pair.
		build := func(src *appsv1alpha1.SidecarContainer, pair bool) []appsv1alpha1.SidecarContainer {
			c := src.DeepCopy()
			for _, m := range c.VolumeMounts {
				if v := byName[m.Name]; v != nil {
					volumes = append(volumes, *v)
				}
			}
			mounts, envs := sharedMounts(c, pod)
			c.VolumeMounts = mergeMounts(c.VolumeMounts, mounts)
			c.Env = append(c.Env, corev1.EnvVar{Name: appsv1alpha1.SidecarEnvKey, Value: "true"})
			c.Env = mergeEnv(c.Env, mergeEnv(transferEnv(c, pod), envs))
			if !pair || c.UpgradeStrategy.UpgradeType != appsv1alpha1.SidecarContainerHotUpgrade {
				return []appsv1alpha1.SidecarContainer{*c}
			}
			both := hotUpgradePair(c)
			working[c.Name] = both[0].Name
			hot = true
			for i, p := range both {
				own, alt := "1", "0"
				if i == 1 {
					own, alt = "0", "1"
				}
				annotations[appsv1alpha1.SidecarSetVersionAnnotationPrefix+p.Name] = own
				annotations[appsv1alpha1.SidecarSetVersionAltAnnotationPrefix+p.Name] = alt
			}
			return both
		}
		for i := range s.Spec.InitContainers {
			c := &s.Spec.InitContainers[i]
			native := IsNativeSidecar(&c.Container)
			if native {
				list[c.Name] = true
			}
			// As in 1.8, only a native sidecar is hot-upgraded as a pair; another init
			// container runs to completion, so HotUpgrade means nothing to it.
			inits = append(inits, build(c, native)...)
		}
		for i := range s.Spec.Containers {
			list[s.Spec.Containers[i].Name] = true
			containers = append(containers, build(&s.Spec.Containers[i], true)...)
		}
		secrets = append(secrets, s.Spec.ImagePullSecrets...)

		names := slices.Sorted(maps.Keys(list))
		hashes[s.Name] = UpgradeSpec{
			UpdateTimestamp: now, Hash: s.Annotations[appsv1alpha1.SidecarSetHashAnnotation], SidecarSetName: s.Name,
			SidecarList: names, ControllerRevision: s.Status.LatestRevision,
		}
		withoutImage[s.Name] = UpgradeSpec{
			UpdateTimestamp: now, Hash: s.Annotations[appsv1alpha1.SidecarSetHashWithoutImageAnnotation], SidecarSetName: s.Name,
			SidecarList: names,
		}
	}
	if err := podadmission.AnnotateJSON(pod, appsv1alpha1.SidecarSetHashAnnotation, hashes); err != nil {
		return false, err
	}
	if err := podadmission.AnnotateJSON(pod, appsv1alpha1.SidecarSetHashWithoutImageAnnotation, withoutImage); err != nil {
		return false, err
	}
	if len(working) > 0 && hot {
		raw, err := json.Marshal(working)
		if err != nil {
			return false, fmt.Errorf("encode %s: %w", appsv1alpha1.SidecarSetWorkingHotUpgradeContainer, err)
		}
		annotations[appsv1alpha1.SidecarSetWorkingHotUpgradeContainer] = string(raw)
	}
	for k, v := range annotations {
		pod.Annotations[k] = v
	}
	pod.Annotations[appsv1alpha1.SidecarSetListAnnotation] = strings.Join(slices.Sorted(maps.Keys(injected)), ",")

	sort.SliceStable(inits, func(i, j int) bool { return inits[i].Name < inits[j].Name })
	pod.Spec.InitContainers = place(pod.Spec.InitContainers, inits)
	pod.Spec.Containers = place(pod.Spec.Containers, containers)
	pod.Spec.Volumes = mergeVolumes(pod.Spec.Volumes, volumes)
	pod.Spec.ImagePullSecrets = mergeSecrets(pod.Spec.ImagePullSecrets, secrets)
	return true, nil
}

// hotUpgradePair returns the serving container (<name>-1, the sidecar's image) and the idle one
// (<name>-2, hotUpgradeEmptyImage), each reading its own and the other's version counter from
// pod annotations through SIDECARSET_VERSION and SIDECARSET_VERSION_ALT.
func hotUpgradePair(c *appsv1alpha1.SidecarContainer) []appsv1alpha1.SidecarContainer {
	n1, n2 := HotUpgradeNames(c.Name)
	one, two := c.DeepCopy(), c.DeepCopy()
	one.Name, two.Name = n1, n2
	two.Image = c.UpgradeStrategy.HotUpgradeEmptyImage
	for _, p := range []*appsv1alpha1.SidecarContainer{one, two} {
		p.Env = append(p.Env,
			annotationEnv(appsv1alpha1.SidecarSetVersionEnvKey, appsv1alpha1.SidecarSetVersionAnnotationPrefix+p.Name),
			annotationEnv(appsv1alpha1.SidecarSetVersionAltEnvKey, appsv1alpha1.SidecarSetVersionAltAnnotationPrefix+p.Name))
	}
	return []appsv1alpha1.SidecarContainer{*one, *two}
}

func annotationEnv(name, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
		APIVersion: "v1", FieldPath: fmt.Sprintf("metadata.annotations['%s']", key),
	}}}
}

// place puts sidecars among a pod's containers: a sidecar whose name the pod already has
// takes that container's place; the others go in front (BeforeAppContainer) or at the end.
func place(pod []corev1.Container, sidecars []appsv1alpha1.SidecarContainer) []corev1.Container {
	at := map[string]int{}
	for i := range pod {
		at[pod[i].Name] = i
	}
	var before, after []corev1.Container
	for i := range sidecars {
		sc := &sidecars[i]
		if j, ok := at[sc.Name]; ok {
			pod[j] = sc.Container
			continue
		}
		if sc.PodInjectPolicy == appsv1alpha1.BeforeAppContainerType {
			before = append(before, sc.Container)
		} else {
			after = append(after, sc.Container)
		}
	}
	out := make([]corev1.Container, 0, len(before)+len(pod)+len(after))
	out = append(append(append(out, before...), pod...), after...)
	return out
}

// subPathEnv finds the $(VAR) references of a subPathExpr.
var subPathEnv = regexp.MustCompile(`\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)`)

// sharedMounts returns, for a sidecar with shareVolumePolicy enabled, the volume mounts of the
// pod's app containers (not other sidecars) and the app env their subPathExpr reads.
func sharedMounts(c *appsv1alpha1.SidecarContainer, pod *corev1.Pod) ([]corev1.VolumeMount, []corev1.EnvVar) {
	if c.ShareVolumePolicy.Type != appsv1alpha1.ShareVolumePolicyEnabled {
		return nil, nil
	}
	var mounts []corev1.VolumeMount
	var envs []corev1.EnvVar
	for i := range pod.Spec.Containers {
		app := &pod.Spec.Containers[i]
		if IsInjected(app) {
			continue
		}
		for _, m := range app.VolumeMounts {
			mounts = append(mounts, m)
			for _, ref := range subPathEnv.FindAllStringSubmatch(m.SubPathExpr, -1) {
				for _, e := range app.Env {
					if e.Name == ref[1] {
						envs = append(envs, e)
					}
				}
			}
		}
	}
	return mounts, envs
}

// IsInjected tells a container a SidecarSet put in the pod (env IS_INJECTED=true).
func IsInjected(c *corev1.Container) bool {
	for _, e := range c.Env {
		if e.Name == appsv1alpha1.SidecarEnvKey {
			return e.Value == "true"
		}
	}
	return false
}

// transferEnv copies, for each transferEnv entry, the named variables of the source container
// (named directly, or read from the pod's name, a label or an annotation). A variable or
// container that is not there is skipped.
func transferEnv(c *appsv1alpha1.SidecarContainer, pod *corev1.Pod) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, t := range c.TransferEnv {
		source := t.SourceContainerName
		if t.SourceContainerNameFrom != nil && t.SourceContainerNameFrom.FieldRef != nil {
			name, ok := fieldValue(pod, t.SourceContainerNameFrom.FieldRef.FieldPath)
			if !ok {
				continue
			}
			source = name
		}
		names := append([]string(nil), t.EnvNames...)
		if t.EnvName != "" {
			names = append(names, t.EnvName)
		}
		sort.Strings(names)
		for i := range pod.Spec.Containers {
			if pod.Spec.Containers[i].Name != source {
				continue
			}
			for _, n := range names {
				for _, e := range pod.Spec.Containers[i].Env {
					if e.Name == n {
						out = append(out, e)
					}
				}
			}
		}
	}
	return out
}

var subscripted = regexp.MustCompile(`^metadata\.(labels|annotations)\['([^']+)'\]$`)

// fieldValue reads metadata.name, metadata.labels['k'] or metadata.annotations['k'].
func fieldValue(pod *corev1.Pod, path string) (string, bool) {
	if path == "metadata.name" {
		return pod.Name, pod.Name != ""
	}
	m := subscripted.FindStringSubmatch(path)
	if m == nil {
		return "", false
	}
	src := pod.Labels
	if m[1] == "annotations" {
		src = pod.Annotations
	}
	v, ok := src[m[2]]
	return v, ok
}

// PatchMetadata applies patchPodMetadata to a pod's annotations: Retain adds a key the pod
// lacks, Overwrite sets it, MergePatchJson merges the value into the pod's JSON value.
func PatchMetadata(annotations map[string]string, patches []appsv1alpha1.SidecarSetPatchPodMetadata) error {
	for _, p := range patches {
		for _, k := range slices.Sorted(maps.Keys(p.Annotations)) {
			v := p.Annotations[k]
			switch p.PatchPolicy {
			case appsv1alpha1.SidecarSetOverwritePatchPolicy:
				annotations[k] = v
			case appsv1alpha1.SidecarSetMergePatchJsonPatchPolicy:
				old, ok := annotations[k]
				if !ok || old == "" {
					annotations[k] = v
					continue
				}
				merged, err := jsonpatch.MergePatch([]byte(old), []byte(v))
				if err != nil {
					return fmt.Errorf("merge into annotation %s: %w", k, err)
				}
				annotations[k] = string(merged)
			default:
				if _, ok := annotations[k]; !ok {
					annotations[k] = v
				}
			}
		}
	}
	return nil
}

// appendNew appends the items of add whose key neither base nor an earlier item of add has.
func appendNew[T any](base, add []T, key func(T) string) []T {
	have := map[string]bool{}
	for _, v := range base {
		have[key(v)] = true
	}
	for _, v := range add {
		if !have[key(v)] {
			base = append(base, v)
			have[key(v)] = true
		}
	}
	return base
}

// mergeEnv appends the variables of add whose names base lacks.
func mergeEnv(base, add []corev1.EnvVar) []corev1.EnvVar {
	return appendNew(base, add, func(e corev1.EnvVar) string { return e.Name })
}

// mergeMounts appends the mounts of add whose name and path base uses for neither.
func mergeMounts(base, add []corev1.VolumeMount) []corev1.VolumeMount {
	names, paths := map[string]bool{}, map[string]bool{}
	for _, m := range base {
		names[m.Name], paths[m.MountPath] = true, true
	}
	for _, m := range add {
		if names[m.Name] || paths[m.MountPath] {
			continue
		}
		base = append(base, m)
		names[m.Name], paths[m.MountPath] = true, true
	}
	return base
}

// mergeVolumes appends the volumes of add whose names base lacks.
func mergeVolumes(base, add []corev1.Volume) []corev1.Volume {
	return appendNew(base, add, func(v corev1.Volume) string { return v.Name })
}

// mergeSecrets is base then add, each name once.
func mergeSecrets(base, add []corev1.LocalObjectReference) []corev1.LocalObjectReference {
	return appendNew(appendNew(nil, base, secretName), add, secretName)
}

func secretName(s corev1.LocalObjectReference) string { return s.Name }
