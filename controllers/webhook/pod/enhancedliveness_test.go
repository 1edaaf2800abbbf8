package pod

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

func TestEnhancedLivenessProbeStep(t *testing.T) {
	liveness := &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/healthy.sh"}}},
		PeriodSeconds: 100, TimeoutSeconds: 5, SuccessThreshold: 1, FailureThreshold: 3,
	}
	// A CloneSet's pod with a probed container "main" and an unprobed one "log".
	pod := func(annotation string) *corev1.Pod {
		b := builder.Pod("p", "ns").OwnedBy(controlledBy("apps.kruise.io/v1alpha1", "CloneSet")).Container("log", builder.DefaultImage)
		if annotation != "" {
			b = b.Annotation(appsv1alpha1.AnnotationUsingEnhancedLiveness, annotation)
		}
		p := b.Obj()
		p.Spec.Containers[0].LivenessProbe = liveness.DeepCopy()
		return p
	}
	bare := pod("true")
	bare.OwnerReferences = nil
	noProbe := pod("true")
	noProbe.Spec.Containers[0].LivenessProbe = nil
	const moved = `[{"name":"main","livenessProbe":{"exec":{"command":["/healthy.sh"]},"timeoutSeconds":5,"periodSeconds":100,"successThreshold":1,"failureThreshold":3}}]`

	tests := []struct {
		name        string
		gateOff     bool
		pod         *corev1.Pod
		wantChanged bool
		// wantContext is the apps.kruise.io/container-probe-context annotation; empty for none.
		wantContext string
	}{
		{name: "an annotated CloneSet pod's liveness probes move into the annotation in 1.8's JSON", pod: pod("true"), wantChanged: true, wantContext: moved},
		{name: "with the gate off (1.8's default) the probes stay", gateOff: true, pod: pod("true")},
		{name: "a pod not annotated keeps its probes", pod: pod("")},
		{name: "an annotation other than \"true\" keeps the probes", pod: pod("false")},
		{name: "a pod no apps.kruise.io workload controls keeps its probes", pod: bare},
		{name: "a pod without liveness probes is left as it is", pod: noProbe},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := features.NewGate()
			if !tt.gateOff {
				if err := g.Set("EnhancedLivenessProbe=true"); err != nil {
					t.Fatal(err)
				}
			}
			p := tt.pod.DeepCopy()
			changed := false
			if step := EnhancedLivenessStepFactory(nil, setup.Deps{Gates: g}); step != nil {
				var err error
				if changed, err = step.Mutate(context.Background(), admission.Request{}, p); err != nil {
					t.Fatal(err)
				}
			}
			testkit.Diff(t, "changed", tt.wantChanged, changed)
			testkit.Diff(t, "probe context", tt.wantContext, p.Annotations[appsv1alpha1.AnnotationNativeContainerProbeContext])
			wantProbe := tt.pod.Spec.Containers[0].LivenessProbe
			if tt.wantChanged {
				wantProbe = nil
			}
			testkit.Diff(t, "main's liveness probe", wantProbe, p.Spec.Containers[0].LivenessProbe)
		})
	}
}
