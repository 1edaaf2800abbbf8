package cloneset

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func TestMutatingHandler(t *testing.T) {
	defaultedCS := func() *appsv1alpha1.CloneSet {
		cs := kinds.CloneSet("web", "ns").Obj()
		setDefaults(cs, true)
		return cs
	}
	tests := []struct {
		name        string
		gates       string
		op          admissionv1.Operation
		obj, old    *appsv1alpha1.CloneSet
		wantPatches []string
	}{
		{
			name: "a new CloneSet is patched with the strategy and template defaults",
			op:   admissionv1.Create,
			obj:  kinds.CloneSet("web", "ns").Obj(),
			wantPatches: []string{
				"add /spec/revisionHistoryLimit",
				"add /spec/template/spec/dnsPolicy",
				"add /spec/template/spec/restartPolicy",
				"add /spec/template/spec/schedulerName",
				"add /spec/template/spec/securityContext",
				"add /spec/template/spec/terminationGracePeriodSeconds",
				"add /spec/template/spec/containers/0/imagePullPolicy",
				"add /spec/template/spec/containers/0/terminationMessagePath",
				"add /spec/template/spec/containers/0/terminationMessagePolicy",
				"add /spec/updateStrategy/maxSurge",
				"add /spec/updateStrategy/maxUnavailable",
				"add /spec/updateStrategy/partition",
				"add /spec/updateStrategy/type",
			},
		},
		{
			name:  "with TemplateNoDefaults a new CloneSet's template is left alone",
			gates: "TemplateNoDefaults=true",
			op:    admissionv1.Create,
			obj:   kinds.CloneSet("web", "ns").Obj(),
			wantPatches: []string{
				"add /spec/revisionHistoryLimit",
				"add /spec/updateStrategy/maxSurge",
				"add /spec/updateStrategy/maxUnavailable",
				"add /spec/updateStrategy/partition",
				"add /spec/updateStrategy/type",
			},
		},
		{
			name: "an already defaulted CloneSet is allowed without patches",
			op:   admissionv1.Create,
			obj:  defaultedCS(),
		},
		{
			name: "an update that keeps the template does not default it",
			op:   admissionv1.Update,
			obj: func() *appsv1alpha1.CloneSet {
				cs := kinds.CloneSet("web", "ns").Replicas(3).Obj()
				setDefaults(cs, false)
				return cs
			}(),
			old: func() *appsv1alpha1.CloneSet {
				cs := kinds.CloneSet("web", "ns").Obj()
				setDefaults(cs, false)
				return cs
			}(),
		},
		{
			name: "an update that changes the template defaults it",
			op:   admissionv1.Update,
			obj: func() *appsv1alpha1.CloneSet {
				cs := defaultedCS()
				cs.Spec.Template.Spec.Containers[0].ImagePullPolicy = ""
				cs.Spec.Template.Spec.Containers[0].Image = "app:2"
				return cs
			}(),
			old:         defaultedCS(),
			wantPatches: []string{"add /spec/template/spec/containers/0/imagePullPolicy"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewMutatingHandler(admission.NewDecoder(apis.NewScheme()), webhooktest.Gates(t, tt.gates))
			var old runtime.Object
			if tt.old != nil {
				old = tt.old
			}
			resp := h.Handle(context.Background(), webhooktest.ObjectRequest(t, tt.op, tt.obj, old))
			if !resp.Allowed {
				t.Fatalf("not allowed: %v", resp.Result)
			}
			got := webhooktest.PatchedPaths(resp.Patches)
			want := append([]string(nil), tt.wantPatches...)
			sortStrings(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("patches (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidatingHandler(t *testing.T) {
	cs := valid()
	cs.ResourceVersion = "1"
	mine := ownedPod("web-mine", testUID)
	foreign := ownedPod("web-foreign", "other-uid")
	// fresh is a pod of this CloneSet the cache has not seen yet.
	fresh := ownedPod("web-fresh", testUID)
	// elsewhere is a pod of this CloneSet's UID in another namespace.
	elsewhere := ownedPod("web-elsewhere", testUID)
	elsewhere.Namespace = "other"
	protected := valid()
	protected.Labels = map[string]string{appsv1alpha1.DeletionProtectionKey: appsv1alpha1.DeletionProtectionTypeAlways}

	withPods := func(names ...string) *appsv1alpha1.CloneSet {
		c := cs.DeepCopy()
		c.Spec.ScaleStrategy.PodsToDelete = names
		return c
	}
	manyNames := []string{"web-mine"}
	for i := range 999 {
		manyNames = append(manyNames, fmt.Sprintf("web-none-%03d", i))
	}
	tests := []struct {
		name          string
		gates         string
		op            admissionv1.Operation
		namespace     *string
		obj, old      *appsv1alpha1.CloneSet
		wantAllowed   bool
		wantCode      int32
		wantMessage   []string
		wantLiveReads int
	}{
		{name: "a valid CloneSet is allowed", op: admissionv1.Create, obj: cs, wantAllowed: true},
		{
			name: "an invalid CloneSet is refused as unprocessable", op: admissionv1.Create,
			obj:      func() *appsv1alpha1.CloneSet { c := cs.DeepCopy(); c.Spec.Replicas = ptr.To[int32](-1); return c }(),
			wantCode: 422,
		},
		{
			name: "a new CloneSet whose pods' revision label would pass 63 characters is refused naming metadata.name", op: admissionv1.Create,
			obj:         func() *appsv1alpha1.CloneSet { c := cs.DeepCopy(); c.Name = strings.Repeat("w", 53); return c }(),
			wantCode:    422,
			wantMessage: []string{"metadata.name: Invalid value", "must be no more than 52 characters"},
		},
		{
			name: "with CloneSetShortHash a 53-character name is allowed, the label holding only the hash", gates: "CloneSetShortHash=true", op: admissionv1.Create,
			obj:         func() *appsv1alpha1.CloneSet { c := cs.DeepCopy(); c.Name = strings.Repeat("w", 53); return c }(),
			wantAllowed: true,
		},
		{name: "podsToDelete naming its own pod from the cache is allowed without an API read", op: admissionv1.Update, obj: withPods("web-mine"), old: cs, wantAllowed: true},
		{name: "podsToDelete naming its own pod the cache has not seen yet is allowed after one API read", op: admissionv1.Update, obj: withPods("web-fresh"), old: cs, wantAllowed: true, wantLiveReads: 1},
		{
			name: "podsToDelete naming a foreign pod is refused", op: admissionv1.Update, obj: withPods("web-foreign"), old: cs, wantCode: 422,
			wantMessage: []string{`spec.scaleStrategy.podsToDelete: Invalid value: "web-foreign": must name existing pods of this CloneSet; 1 listed are not`},
		},
		{
			name: "podsToDelete naming no pod is refused with the same message as a foreign pod", op: admissionv1.Update, obj: withPods("web-none"), old: cs, wantCode: 422,
			wantMessage:   []string{`spec.scaleStrategy.podsToDelete: Invalid value: "web-none": must name existing pods of this CloneSet; 1 listed are not`},
			wantLiveReads: 1,
		},
		{
			name: "podsToDelete naming a pod in another namespace is refused as if it did not exist", op: admissionv1.Update, obj: withPods("web-elsewhere"), old: cs, wantCode: 422,
			wantMessage:   []string{`spec.scaleStrategy.podsToDelete: Invalid value: "web-elsewhere": must name existing pods of this CloneSet; 1 listed are not`},
			wantLiveReads: 1,
		},
		{
			name: "1000 podsToDelete names, 999 of them no pod, are refused listing the first of them and costing no API read", op: admissionv1.Update,
			obj: withPods(manyNames...), old: cs, wantCode: 422,
			wantMessage: []string{"web-none-000, web-none-001", "web-none-019 and 979 more", "999 listed are not"},
		},
		{
			name: "an object in another namespace than the request's is refused before anything is read", op: admissionv1.Update,
			obj: func() *appsv1alpha1.CloneSet { c := withPods("web-elsewhere"); c.Namespace = "other"; return c }(), old: cs, wantCode: 400,
			wantMessage: []string{`metadata.namespace: Invalid value: "other": must be the namespace of the admission request, "ns"`},
		},
		{
			name: "a request that names no namespace is refused", op: admissionv1.Update, namespace: ptr.To(""),
			obj: withPods("web-mine"), old: cs, wantCode: 400, wantMessage: []string{"metadata.namespace: Required value"},
		},
		{name: "deleting a protected CloneSet is forbidden with the protection gate on", gates: "ResourcesDeletionProtection=true", op: admissionv1.Delete, old: protected, wantCode: 403},
		{name: "deleting a protected CloneSet is allowed with the protection gate at its default, off", op: admissionv1.Delete, old: protected, wantAllowed: true},
		{name: "deleting an unprotected CloneSet is allowed", op: admissionv1.Delete, old: cs, wantAllowed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cached := &webhooktest.CountingReader{Reader: webhooktest.Reader(mine, foreign, elsewhere)}
			live := &webhooktest.CountingReader{Reader: webhooktest.Reader(mine, foreign, fresh, elsewhere)}
			g := webhooktest.Gates(t, tt.gates)
			h := NewValidatingHandler(admission.NewDecoder(apis.NewScheme()), cached, live, g, deletionprotection.NewGuard(g, nil, false))
			var obj, old runtime.Object
			if tt.obj != nil {
				obj = tt.obj
			}
			if tt.old != nil {
				old = tt.old
			}
			req := webhooktest.ObjectRequest(t, tt.op, obj, old)
			if tt.namespace != nil {
				req.Namespace = *tt.namespace
			}
			resp := h.Handle(context.Background(), req)
			var code int32
			var msg string
			if resp.Result != nil && !resp.Allowed {
				code, msg = resp.Result.Code, resp.Result.Message
			}
			if diff := cmp.Diff([]any{tt.wantAllowed, tt.wantCode, tt.wantLiveReads}, []any{resp.Allowed, code, live.Reads}); diff != "" {
				t.Errorf("allowed, code, API reads (-want +got):\n%s\nresult: %v", diff, resp.Result)
			}
			for _, want := range tt.wantMessage {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not contain %q", msg, want)
				}
			}
		})
	}
}

func sortStrings(s []string) { sort.Strings(s) }

func TestSetDefaultsStrategy(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*appsv1alpha1.CloneSet)
		want   func(*appsv1alpha1.CloneSetSpec)
	}{
		{
			name:   "an empty spec gets one replica, ten revisions, ReCreate, partition 0, maxUnavailable 20% and maxSurge 0",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.Replicas = nil },
			want:   func(*appsv1alpha1.CloneSetSpec) {},
		},
		{
			name: "set values are kept",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.Replicas = ptr.To[int32](4)
				cs.Spec.RevisionHistoryLimit = ptr.To[int32](2)
				cs.Spec.UpdateStrategy = appsv1alpha1.CloneSetUpdateStrategy{
					Type:           appsv1alpha1.RecreateCloneSetUpdateStrategyType,
					Partition:      ptr.To(intstr.FromString("50%")),
					MaxUnavailable: ptr.To(intstr.FromInt32(2)),
					MaxSurge:       ptr.To(intstr.FromInt32(1)),
				}
			},
			want: func(s *appsv1alpha1.CloneSetSpec) {
				s.Replicas = ptr.To[int32](4)
				s.RevisionHistoryLimit = ptr.To[int32](2)
				s.UpdateStrategy.Partition = ptr.To(intstr.FromString("50%"))
				s.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(2))
				s.UpdateStrategy.MaxSurge = ptr.To(intstr.FromInt32(1))
			},
		},
		{
			name: "an in-place type gets an empty inPlaceUpdateStrategy",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.Type = appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType
			},
			want: func(s *appsv1alpha1.CloneSetSpec) {
				s.UpdateStrategy.Type = appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType
				s.UpdateStrategy.InPlaceUpdateStrategy = &appspub.InPlaceUpdateStrategy{}
			},
		},
		{
			name: "an in-place type keeps its grace period",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.Type = appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
				cs.Spec.UpdateStrategy.InPlaceUpdateStrategy = &appspub.InPlaceUpdateStrategy{GracePeriodSeconds: 10}
			},
			want: func(s *appsv1alpha1.CloneSetSpec) {
				s.UpdateStrategy.Type = appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
				s.UpdateStrategy.InPlaceUpdateStrategy = &appspub.InPlaceUpdateStrategy{GracePeriodSeconds: 10}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := kinds.CloneSet("web", "ns").Obj()
			tt.mutate(cs)
			setDefaults(cs, false)

			want := kinds.CloneSet("web", "ns").Obj().Spec
			want.RevisionHistoryLimit = ptr.To[int32](10)
			want.UpdateStrategy = appsv1alpha1.CloneSetUpdateStrategy{
				Type:           appsv1alpha1.RecreateCloneSetUpdateStrategyType,
				Partition:      ptr.To(intstr.FromInt32(0)),
				MaxUnavailable: ptr.To(intstr.FromString("20%")),
				MaxSurge:       ptr.To(intstr.FromInt32(0)),
			}
			tt.want(&want)
			if diff := cmp.Diff(want, cs.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetDefaultsTemplate(t *testing.T) {
	tests := []struct {
		name string
		in   corev1.PodSpec
		want corev1.PodSpec
	}{
		{
			name: "a bare pod spec gets the pod-level and container defaults",
			in:   corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example.com/app:1"}}},
			want: withPodDefaults(corev1.PodSpec{
				Containers: []corev1.Container{defaulted("main", "registry.example.com/app:1", corev1.PullIfNotPresent)},
			}),
		},
		{
			name: "untagged and latest images are pulled Always, digests IfNotPresent",
			in: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "init", Image: "registry.example.com:5000/app"}},
				Containers: []corev1.Container{
					{Name: "a", Image: "app:latest"},
					{Name: "b", Image: "registry.example.com/app@sha256:0123"},
				},
			},
			want: withPodDefaults(corev1.PodSpec{
				InitContainers: []corev1.Container{defaulted("init", "registry.example.com:5000/app", corev1.PullAlways)},
				Containers:     []corev1.Container{defaulted("a", "app:latest", corev1.PullAlways), defaulted("b", "registry.example.com/app@sha256:0123", corev1.PullIfNotPresent)},
			}),
		},
		{
			name: "an empty image, to be filled in later, is pulled IfNotPresent",
			in:   corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}},
			want: withPodDefaults(corev1.PodSpec{
				Containers: []corev1.Container{defaulted("main", "", corev1.PullIfNotPresent)},
			}),
		},
		{
			name: "ports, probes, field refs and volumes get their defaults; host network copies ports",
			in: corev1.PodSpec{
				HostNetwork: true,
				Containers: []corev1.Container{{
					Name: "main", Image: "app:1",
					Ports:          []corev1.ContainerPort{{ContainerPort: 8080}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(8080)}}},
					Env:            []corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
				}},
				Volumes: []corev1.Volume{
					{Name: "scratch"},
					{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}}},
					{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var"}}},
				},
			},
			want: withPodDefaults(corev1.PodSpec{
				HostNetwork: true,
				Containers: []corev1.Container{func() corev1.Container {
					c := defaulted("main", "app:1", corev1.PullIfNotPresent)
					c.Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
					c.ReadinessProbe = &corev1.Probe{
						ProbeHandler:   corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(8080), Path: "/", Scheme: corev1.URISchemeHTTP}},
						TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
					}
					c.Env = []corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName", APIVersion: "v1"}}}}
					return c
				}()},
				Volumes: []corev1.Volume{
					{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, DefaultMode: ptr.To[int32](0o644)}}},
					{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var", Type: ptr.To(corev1.HostPathUnset)}}},
				},
			}),
		},
		{
			name: "set pod-level values are kept",
			in:   keptPodValues(),
			want: keptPodValues(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := kinds.CloneSet("web", "ns").Obj()
			cs.Spec.Template.Spec = tt.in
			setDefaults(cs, true)
			if diff := cmp.Diff(tt.want, cs.Spec.Template.Spec); diff != "" {
				t.Errorf("template spec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetDefaultsLeavesTheTemplateAloneWhenAsked(t *testing.T) {
	cs := kinds.CloneSet("web", "ns").Obj()
	want := cs.Spec.Template.DeepCopy()
	setDefaults(cs, false)
	if diff := cmp.Diff(*want, cs.Spec.Template); diff != "" {
		t.Errorf("template (-want +got):\n%s", diff)
	}
}

func TestSetDefaultsVolumeClaimTemplates(t *testing.T) {
	cs := kinds.CloneSet("web", "ns").Obj()
	cs.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	setDefaults(cs, true)
	want := []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec:       corev1.PersistentVolumeClaimSpec{VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem)},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}}
	if diff := cmp.Diff(want, cs.Spec.VolumeClaimTemplates); diff != "" {
		t.Errorf("volume claim templates (-want +got):\n%s", diff)
	}
}

// withPodDefaults is spec with the pod-level defaults a bare pod spec gets.
func withPodDefaults(spec corev1.PodSpec) corev1.PodSpec {
	spec.RestartPolicy, spec.DNSPolicy, spec.SchedulerName = corev1.RestartPolicyAlways, corev1.DNSClusterFirst, corev1.DefaultSchedulerName
	spec.SecurityContext, spec.TerminationGracePeriodSeconds = &corev1.PodSecurityContext{}, ptr.To[int64](30)
	return spec
}

// keptPodValues is a pod spec whose pod-level values are all set, to other values than the
// defaults.
func keptPodValues() corev1.PodSpec {
	return corev1.PodSpec{
		Containers:                    []corev1.Container{defaulted("main", "app:1", corev1.PullNever)},
		RestartPolicy:                 corev1.RestartPolicyAlways,
		DNSPolicy:                     corev1.DNSDefault,
		SecurityContext:               &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)},
		TerminationGracePeriodSeconds: ptr.To[int64](5),
		SchedulerName:                 "custom",
	}
}

func defaulted(name, image string, pull corev1.PullPolicy) corev1.Container {
	return corev1.Container{
		Name: name, Image: image, ImagePullPolicy: pull,
		TerminationMessagePath:   corev1.TerminationMessagePathDefault,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}
}
