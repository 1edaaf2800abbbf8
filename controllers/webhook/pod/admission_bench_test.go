package pod

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/launchpriority"
	"github.com/kruise-addon/kruise-addon/controllers/persistentpodstate/restore"
	"github.com/kruise-addon/kruise-addon/controllers/podprobemarker"
	"github.com/kruise-addon/kruise-addon/controllers/podunavailablebudget/guard"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset/inject"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/controllers/workloadspread/placement"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// admissionNamespace is where the objects of the admission benchmarks live.
const admissionNamespace = "bench-admission"

// admissionObjects are what test/bench's BenchmarkPodAdmissionLatency puts in its namespace:
// Jobs "web" and "spread"; 100 SidecarSets, 5 selecting each Job's pods and the rest selecting
// nothing; 100 WorkloadSpreads, one placing "spread"'s pods in two zone subsets of 50% each and
// the rest targeting Jobs that do not exist.
func admissionObjects() []client.Object {
	objs := []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: admissionNamespace}}}
	for _, app := range []string{"web", "spread"} {
		j := builder.Job(app, admissionNamespace).Parallelism(200).Obj()
		j.UID = types.UID("uid-job-" + app)
		objs = append(objs, j)
	}
	sidecarSet := func(name, app string) *appsv1alpha1.SidecarSet {
		return &appsv1alpha1.SidecarSet{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Generation: 1, ResourceVersion: "7",
				Annotations: map[string]string{
					appsv1alpha1.SidecarSetHashAnnotation:             "hash-" + name,
					appsv1alpha1.SidecarSetHashWithoutImageAnnotation: "hash-noimage-" + name,
				}},
			Spec: appsv1alpha1.SidecarSetSpec{
				Namespace: admissionNamespace,
				Selector:  &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
				Containers: []appsv1alpha1.SidecarContainer{{Container: corev1.Container{
					Name: name + "-agent", Image: "registry.example.com/agent:1"}}},
			},
			Status: appsv1alpha1.SidecarSetStatus{LatestRevision: name + "-rev"},
		}
	}
	made := 0
	for _, app := range []string{"web", "spread"} {
		for i := range 5 {
			objs = append(objs, sidecarSet(fmt.Sprintf("bench-adm-%s-%d", app, i), app))
			made++
		}
	}
	for i := 0; made < 100; i, made = i+1, made+1 {
		objs = append(objs, sidecarSet(fmt.Sprintf("bench-adm-decoy-%d", i), fmt.Sprintf("decoy-%d", i)))
	}
	spread := kinds.WorkloadSpread("bench-adm-spread", admissionNamespace).Target("batch/v1", "Job", "spread").
		ZoneSubset("a", "zone-a", "50%").ZoneSubset("b", "zone-b", "50%").Obj()
	objs = append(objs, spread)
	for i := range 99 {
		objs = append(objs, kinds.WorkloadSpread(fmt.Sprintf("bench-adm-decoy-%d", i), admissionNamespace).
			Target("batch/v1", "Job", fmt.Sprintf("absent-%d", i)).ZoneSubset("a", "zone-a", "50%").ZoneSubset("b", "zone-b", "").Obj())
	}
	for _, o := range objs {
		if o.GetUID() == "" {
			o.SetUID(types.UID("uid-" + o.GetName()))
		}
		if o.GetResourceVersion() == "" {
			o.SetResourceVersion("5")
		}
	}
	return objs
}

// jobPod is a pod of the Job app as the apiserver hands it to /mutate-pod: generated name, the
// defaults and the service account token volume already set.
func jobPod(app string) *corev1.Pod {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: admissionNamespace, UID: types.UID("uid-job-" + app)}}
	pod := builder.Pod("", admissionNamespace).GenerateName(app+"-").Label("app", app).
		Label("batch.kubernetes.io/job-name", app).Label("job-name", app).
		OwnedBy(builder.ControllerRef("batch/v1", "Job", job)).RestartPolicy(corev1.RestartPolicyNever).
		TerminationGracePeriod(30).SchedulerName(corev1.DefaultSchedulerName).
		Tolerate("node.kubernetes.io/not-ready", "", corev1.TaintEffectNoExecute).
		Tolerate("node.kubernetes.io/unreachable", "", corev1.TaintEffectNoExecute).Obj()
	pod.Spec.DNSPolicy = corev1.DNSClusterFirst
	pod.Spec.ServiceAccountName = "default"
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{}
	pod.Spec.EnableServiceLinks = ptr.To(true)
	pod.Spec.PreemptionPolicy = ptr.To(corev1.PreemptLowerPriority)
	pod.Spec.Priority = ptr.To[int32](0)
	pod.Spec.Volumes = []corev1.Volume{{Name: "kube-api-access-abcde", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](420),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
		}}}}}
	c := &pod.Spec.Containers[0]
	c.ImagePullPolicy = corev1.PullIfNotPresent
	c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	c.Env = []corev1.EnvVar{{Name: "MODE", Value: "bench"}}
	c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "kube-api-access-abcde", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}
	return pod
}

// admissionHandler is /mutate-pod with the steps kruise-manager runs, in its order, over a cache
// holding admissionObjects and extra.
func admissionHandler(t testing.TB, extra ...client.Object) *MutatingHandler {
	mgr := webhooktest.CacheManager(webhooktest.NewCache(append(admissionObjects(), extra...)...))
	wsStep, _ := placement.Steps()
	d := setup.Deps{Gates: webhooktest.Gates(t, ""), ManagerNamespace: "kruise-system",
		Clock: clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}
	h, ok := Handlers(wsStep, inject.StepFactory, launchpriority.StepFactory, guard.StepFactory, restore.StepFactory,
		EnhancedLivenessStepFactory, podprobemarker.ServerlessStepFactory)(mgr, d)[MutatingPath].(*MutatingHandler)
	if !ok {
		t.Fatal("no /mutate-pod handler")
	}
	return h
}

// admissionCases are the pod creations of BenchmarkPodAdmissionLatency, and a pod no object
// selects. The spread pod is a dry run: it is placed but not recorded, so every iteration sees
// the same WorkloadSpread status and the figure is the handler's, not a status write's.
func admissionCases(t testing.TB) []struct {
	name string
	req  admission.Request
} {
	req := func(app string, dry bool) admission.Request {
		r := webhooktest.ObjectRequest(t, admissionv1.Create, jobPod(app), nil)
		r.Namespace, r.Name = admissionNamespace, ""
		r.DryRun = ptr.To(dry)
		return r
	}
	return []struct {
		name string
		req  admission.Request
	}{
		{"five SidecarSets inject, no WorkloadSpread targets the pod", req("web", false)},
		{"five SidecarSets inject, one WorkloadSpread places the pod (dry run)", req("spread", true)},
		{"nothing selects the pod", req("lonely", false)},
	}
}

// BenchmarkMutatePod is one pod creation through /mutate-pod with 100 SidecarSets and 100
// WorkloadSpreads in the pod's namespace, read from an in-memory cache; run with -benchmem.
func BenchmarkMutatePod(b *testing.B) {
	h := admissionHandler(b)
	ctx := ctrl.LoggerInto(context.Background(), logr.Discard())
	for _, c := range admissionCases(b) {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if resp := h.Handle(ctx, c.req); !resp.Allowed {
					b.Fatalf("refused: %v", resp.Result)
				}
			}
		})
	}
}
