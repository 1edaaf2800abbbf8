package imagepulljob

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

const (
	// DaemonConfigNamespace is the default namespace kruise-daemon reads pull secrets from;
	// the manager's --daemon-config-namespace overrides it.
	DaemonConfigNamespace = "kruise-daemon-config"
	// SourceKeyAnnotation on a copy names its source Secret as "namespace/name" (an annotation:
	// the key may exceed a label value's length).
	SourceKeyAnnotation = "imagepulljobs.kruise.io/source-key"
	// SourceUIDLabel on a copy holds its source Secret's UID.
	SourceUIDLabel = "imagepulljobs.kruise.io/source-uid"
	// ReferencesAnnotation on a copy lists the "namespace/name" of every ImagePullJob using it,
	// comma-separated; a copy nobody references is deleted.
	ReferencesAnnotation = "imagepulljobs.kruise.io/references"
)

// SecretRecheck is how often an unfinished job that uses pull secrets reads them again, so a
// changed Secret reaches its copy within seconds. The manager neither lists nor watches
// Secrets (its RBAC only gets them by name), so it looks instead of being told.
const SecretRecheck = 5 * time.Second

// recheck is when job's pull secrets are read again; zero when it has none to copy.
func (s *secretSyncer) recheck(job *appsv1alpha1.ImagePullJob) time.Duration {
	if len(job.Spec.PullSecrets) == 0 || job.Namespace == s.configNamespace() || job.Status.CompletionTime != nil {
		return 0
	}
	return SecretRecheck
}

// secretSyncer keeps the copies of jobs' pull secrets in the daemon config namespace. Secrets
// are read live (reader), so the manager caches no Secret.
type secretSyncer struct {
	client client.Client
	reader client.Reader
	// namespace is the daemon config namespace; empty means DaemonConfigNamespace.
	namespace string
}

// configNamespace is where the copies go.
func (s *secretSyncer) configNamespace() string {
	if s.namespace == "" {
		return DaemonConfigNamespace
	}
	return s.namespace
}

// sourceRefs are the job's pull secrets, in its namespace.
func sourceRefs(job *appsv1alpha1.ImagePullJob) []appsv1alpha1.ReferenceObject {
	var out []appsv1alpha1.ReferenceObject
	for _, s := range job.Spec.PullSecrets {
		out = append(out, appsv1alpha1.ReferenceObject{Namespace: job.Namespace, Name: s})
	}
	return out
}

// sync makes sure every pull secret of job that exists has one copy, shared by every job that
// uses it, and that the copy lists job among its references; job is dropped from copies of
// secrets it no longer lists (or of an older secret of the same name). It returns the copies,
// for the NodeImage specs. A job in the config namespace itself uses its secrets directly.
func (s *secretSyncer) sync(ctx context.Context, job *appsv1alpha1.ImagePullJob) ([]appsv1alpha1.ReferenceObject, error) {
	if job.Namespace == s.configNamespace() {
		return sourceRefs(job), nil
	}
	all, err := s.copies(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.reader.Get(ctx, types.NamespacedName{Name: s.configNamespace()}, &corev1.Namespace{}); err != nil {
		return nil, fmt.Errorf("get namespace %s: %w", s.configNamespace(), err)
	}
	me := jobKey(job)
	used := map[string]bool{}
	var out []appsv1alpha1.ReferenceObject
	for _, ref := range sourceRefs(job) {
		src := &corev1.Secret{}
		if err := s.reader.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, src); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("get pull secret %s: %w", ref.Name, err)
		}
		target := copyFor(all, src, me)
		switch {
		case target == nil:
			target = copyOf(src, s.configNamespace(), []string{me})
			if err := s.client.Create(ctx, target); err != nil {
				return nil, fmt.Errorf("copy pull secret %s: %w", ref.Name, err)
			}
		case !reflect.DeepEqual(src.Data, target.Data) || !hasKey(target, me):
			target = target.DeepCopy()
			target.Data = src.Data
			target.Annotations[ReferencesAnnotation] = joinKeys(append(references(target), me))
			if err := s.client.Update(ctx, target); err != nil {
				return nil, fmt.Errorf("update pull secret copy %s: %w", target.Name, err)
			}
		}
		used[target.Name] = true
		out = append(out, appsv1alpha1.ReferenceObject{Namespace: target.Namespace, Name: target.Name})
	}
	var stale []*corev1.Secret
	for _, t := range all {
		if !used[t.Name] && hasKey(t, me) {
			stale = append(stale, t)
		}
	}
	return out, s.release(ctx, job, stale)
}

// releaseAll drops job from every copy it references, deleting copies left unreferenced.
func (s *secretSyncer) releaseAll(ctx context.Context, job *appsv1alpha1.ImagePullJob) error {
	if job.Namespace == s.configNamespace() {
		return nil
	}
	all, err := s.copies(ctx)
	if err != nil {
		return err
	}
	var mine []*corev1.Secret
	for _, t := range all {
		if hasKey(t, jobKey(job)) {
			mine = append(mine, t)
		}
	}
	return s.release(ctx, job, mine)
}

// copies lists the live copies in the config namespace, read live.
func (s *secretSyncer) copies(ctx context.Context) ([]*corev1.Secret, error) {
	list := &corev1.SecretList{}
	if err := s.reader.List(ctx, list, client.InNamespace(s.configNamespace()), client.HasLabels{SourceUIDLabel}); err != nil {
		return nil, fmt.Errorf("list pull secret copies: %w", err)
	}
	var out []*corev1.Secret
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp == nil {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// copyFor is the copy of src to use: one that already lists me, else any copy of src.
func copyFor(all []*corev1.Secret, src *corev1.Secret, me string) *corev1.Secret {
	var found *corev1.Secret
	for _, t := range all {
		if t.Labels[SourceUIDLabel] != string(src.UID) {
			continue
		}
		if hasKey(t, me) {
			return t
		}
		if found == nil {
			found = t
		}
	}
	return found
}

// release removes job from the references of targets and deletes those nobody references.
func (s *secretSyncer) release(ctx context.Context, job *appsv1alpha1.ImagePullJob, targets []*corev1.Secret) error {
	me := jobKey(job)
	for _, t := range targets {
		var rest []string
		for _, k := range references(t) {
			if k != me {
				rest = append(rest, k)
			}
		}
		if len(rest) == 0 {
			// Deleting with the resourceVersion read: a job that joined meanwhile keeps it.
			pre := client.Preconditions{ResourceVersion: &t.ResourceVersion}
			if err := s.client.Delete(ctx, t, pre); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete pull secret copy %s: %w", t.Name, err)
			}
			continue
		}
		t = t.DeepCopy()
		t.Annotations[ReferencesAnnotation] = joinKeys(rest)
		if err := s.client.Update(ctx, t); err != nil {
			return fmt.Errorf("release pull secret copy %s: %w", t.Name, err)
		}
	}
	return nil
}

// copyOf is a new copy of src in the config namespace, referenced by keys.
func copyOf(src *corev1.Secret, namespace string, keys []string) *corev1.Secret {
	t := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:    namespace,
			GenerateName: src.Name + "-",
			Labels:       maps.Clone(src.Labels),
			Annotations:  maps.Clone(src.Annotations),
		},
		Type: src.Type,
		Data: maps.Clone(src.Data),
	}
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	delete(t.Annotations, "kubectl.kubernetes.io/last-applied-configuration")
	t.Labels[SourceUIDLabel] = string(src.UID)
	t.Annotations[SourceKeyAnnotation] = src.Namespace + "/" + src.Name
	t.Annotations[ReferencesAnnotation] = joinKeys(keys)
	return t
}

func references(t *corev1.Secret) []string {
	var out []string
	for _, k := range strings.Split(t.Annotations[ReferencesAnnotation], ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

func hasKey(t *corev1.Secret, key string) bool {
	for _, k := range references(t) {
		if k == key {
			return true
		}
	}
	return false
}

// joinKeys is the sorted, de-duplicated annotation value.
func joinKeys(keys []string) string {
	set := map[string]bool{}
	for _, k := range keys {
		set[k] = true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func jobKey(job *appsv1alpha1.ImagePullJob) string {
	return job.Namespace + "/" + job.Name
}
