package inplaceupdate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/internal/testclient"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

var quantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

// list is a resource list of cpu and memory; an empty string leaves the resource out.
func list(cpu, memory string) corev1.ResourceList {
	l := corev1.ResourceList{}
	if cpu != "" {
		l[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		l[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return l
}

// sized is the template whose main container is Burstable: requests 100m/64Mi, limits 200m/128Mi.
func sized(mutate ...func(*corev1.PodTemplateSpec)) *corev1.PodTemplateSpec {
	return template(append([]func(*corev1.PodTemplateSpec){func(t *corev1.PodTemplateSpec) {
		t.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: list("100m", "64Mi"), Limits: list("200m", "128Mi")}
	}}, mutate...)...)
}

func TestPlanVerticalScaling(t *testing.T) {
	gate := Options{VerticalScaling: true}
	main := func(f func(*corev1.Container)) func(*corev1.PodTemplateSpec) {
		return func(t *corev1.PodTemplateSpec) { f(&t.Spec.Containers[0]) }
	}
	moreCPU := main(func(c *corev1.Container) { c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("150m") })
	restarts := func(r corev1.ResourceName) func(*corev1.PodTemplateSpec) {
		return main(func(c *corev1.Container) {
			c.ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: r, RestartPolicy: corev1.RestartContainer}}
		})
	}
	guaranteedSide := func(t *corev1.PodTemplateSpec) {
		t.Spec.Containers[1].Resources = corev1.ResourceRequirements{Requests: list("50m", "32Mi"), Limits: list("50m", "32Mi")}
	}
	type tc struct {
		from     *corev1.PodTemplateSpec // sized() when nil
		next     *corev1.PodTemplateSpec
		opts     Options
		wantOK   bool
		wantPlan *Plan
	}
	testkit.Cases(t, map[string]tc{
		"a cpu request change needs a new pod without the gate": {
			next: sized(moreCPU),
		},
		"a cpu request change goes in place with the gate, and the pod stays in service": {
			next:   sized(moreCPU),
			opts:   gate,
			wantOK: true,
			wantPlan: &Plan{Revision: "v2", StaysInService: true,
				ContainerResources: map[string]corev1.ResourceRequirements{"main": {Requests: list("150m", "")}}},
		},
		"a cpu and memory request and limit change goes in place with only the changed values": {
			next: sized(main(func(c *corev1.Container) {
				c.Resources = corev1.ResourceRequirements{Requests: list("200m", "96Mi"), Limits: list("400m", "128Mi")}
			})),
			opts:   gate,
			wantOK: true,
			wantPlan: &Plan{Revision: "v2", StaysInService: true,
				ContainerResources: map[string]corev1.ResourceRequirements{"main": {Requests: list("200m", "96Mi"), Limits: list("400m", "")}}},
		},
		"the same quantity spelled otherwise is no change": {
			next:     sized(main(func(c *corev1.Container) { c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("0.1") })),
			opts:     gate,
			wantOK:   true,
			wantPlan: &Plan{Revision: "v2"},
		},
		"a resize with an image change goes in place and takes the pod out of service": {
			next:   sized(moreCPU, main(func(c *corev1.Container) { c.Image = "web:2" })),
			opts:   gate,
			wantOK: true,
			wantPlan: &Plan{Revision: "v2", ContainerImages: map[string]string{"main": "web:2"},
				ContainerResources: map[string]corev1.ResourceRequirements{"main": {Requests: list("150m", "")}}},
		},
		"a resize of a resource whose resizePolicy is RestartContainer takes the pod out of service": {
			from:   sized(restarts(corev1.ResourceCPU)),
			next:   sized(restarts(corev1.ResourceCPU), moreCPU),
			opts:   gate,
			wantOK: true,
			wantPlan: &Plan{Revision: "v2",
				ContainerResources: map[string]corev1.ResourceRequirements{"main": {Requests: list("150m", "")}}},
		},
		"a resize of cpu when only memory restarts the container stays in service": {
			from:   sized(restarts(corev1.ResourceMemory)),
			next:   sized(restarts(corev1.ResourceMemory), moreCPU),
			opts:   gate,
			wantOK: true,
			wantPlan: &Plan{Revision: "v2", StaysInService: true,
				ContainerResources: map[string]corev1.ResourceRequirements{"main": {Requests: list("150m", "")}}},
		},
		"a resizePolicy change needs a new pod": {
			next: sized(restarts(corev1.ResourceMemory)),
			opts: gate,
		},
		"an added limit needs a new pod": {
			from: template(main(func(c *corev1.Container) { c.Resources.Requests = list("100m", "64Mi") })),
			next: template(main(func(c *corev1.Container) {
				c.Resources = corev1.ResourceRequirements{Requests: list("100m", "64Mi"), Limits: list("200m", "")}
			})),
			opts: gate,
		},
		"a removed request needs a new pod": {
			next: sized(main(func(c *corev1.Container) { c.Resources.Requests = list("100m", "") })),
			opts: gate,
		},
		"an ephemeral-storage change needs a new pod": {
			next: sized(main(func(c *corev1.Container) {
				c.Resources.Requests = list("100m", "64Mi")
				c.Resources.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
			})),
			opts: gate,
		},
		"a resize that changes the QoS class needs a new pod": {
			from: sized(guaranteedSide),
			next: sized(guaranteedSide, main(func(c *corev1.Container) { c.Resources.Requests = list("200m", "128Mi") })),
			opts: gate,
		},
		"a resize with a command change needs a new pod": {
			next: sized(moreCPU, main(func(c *corev1.Container) { c.Command = []string{"sh"} })),
			opts: gate,
		},
	}, func(t *testing.T, tc tc) {
		from := tc.from
		if from == nil {
			from = sized()
		}
		plan, ok, err := PlanUpdate(rev("v1", from), rev("v2", tc.next), SpecTemplate, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if ok != tc.wantOK {
			t.Fatalf("in place = %v, want %v", ok, tc.wantOK)
		}
		testkit.Diff(t, "plan", tc.wantPlan, plan, quantities)
	})
}

func TestCompletedResize(t *testing.T) {
	// pod asks for requests 150m/64Mi and limits 200m/128Mi; reported is what the kubelet
	// reports in the container status (nil: nothing).
	pod := func(reported *corev1.ResourceRequirements) *corev1.Pod {
		p := &corev1.Pod{}
		p.Spec.Containers = []corev1.Container{{Name: "main", Image: "web:1",
			Resources: corev1.ResourceRequirements{Requests: list("150m", "64Mi"), Limits: list("200m", "128Mi")}}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "web:1", ImageID: "sha256:web", Resources: reported}}
		return p
	}
	resize := &appspub.InPlaceUpdateState{Revision: "v2", UpdateResources: true}
	testkit.Cases(t, map[string]struct {
		pod   *corev1.Pod
		state *appspub.InPlaceUpdateState
		want  bool
	}{
		"a resize the kubelet reports is finished": {
			pod:   pod(&corev1.ResourceRequirements{Requests: list("150m", "64Mi"), Limits: list("200m", "128Mi")}),
			state: resize, want: true,
		},
		"a resize whose old request the kubelet still reports is not finished": {
			pod:   pod(&corev1.ResourceRequirements{Requests: list("100m", "64Mi"), Limits: list("200m", "128Mi")}),
			state: resize,
		},
		"a resize with no resources reported is not finished": {
			pod:   pod(nil),
			state: resize,
		},
		"an update that resized nothing does not wait for reported resources": {
			pod:   pod(nil),
			state: &appspub.InPlaceUpdateState{Revision: "v2"},
			want:  true,
		},
	}, func(t *testing.T, tc struct {
		pod   *corev1.Pod
		state *appspub.InPlaceUpdateState
		want  bool
	}) {
		if got := Completed(tc.pod, tc.state); got != tc.want {
			t.Fatalf("Completed() = %v, want %v", got, tc.want)
		}
	})
}

func TestUpdateWritesResourcesThroughTheResizeSubresource(t *testing.T) {
	pod := builder.Pod("p", "ns").Container("main", "web:1").ReadinessGate(appspub.InPlaceUpdateReady).
		Condition(appspub.InPlaceUpdateReady, corev1.ConditionTrue).Obj()
	pod.UID = "uid-1"
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: list("100m", "64Mi"), Limits: list("200m", "128Mi")}
	base := testclient.New(pod)
	var subresources []string
	c := interceptor.NewClient(base.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			subresources = append(subresources, sub)
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if raw, _ := patch.Data(obj); strings.Contains(string(raw), "resources") {
				t.Errorf("the pod patch writes resources, which only the resize subresource takes: %s", raw)
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
	u := &Updater{Client: c, Reader: base, Clock: clocktesting.NewFakePassiveClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
		RevisionLabel: "controller-revision-hash"}
	plan := &Plan{Revision: "v2", StaysInService: true,
		ContainerResources: map[string]corev1.ResourceRequirements{"main": {Requests: list("150m", ""), Limits: list("", "256Mi")}}}
	if _, err := u.Update(context.Background(), pod, plan); err != nil {
		t.Fatal(err)
	}
	testkit.Diff(t, "subresource writes", []string{"resize"}, subresources)
	stored := &corev1.Pod{}
	if err := base.Get(context.Background(), client.ObjectKeyFromObject(pod), stored); err != nil {
		t.Fatal(err)
	}
	testkit.Diff(t, "resources", corev1.ResourceRequirements{Requests: list("150m", "64Mi"), Limits: list("200m", "256Mi")},
		stored.Spec.Containers[0].Resources, quantities)
	state, err := State(stored)
	if err != nil || state == nil || !state.UpdateResources || state.Revision != "v2" {
		t.Errorf("state = %+v (%v), want revision v2 with updateResources", state, err)
	}
	if c := Condition(stored); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("InPlaceUpdateReady = %+v, want it left True: a resize that restarts nothing keeps the pod in service", c)
	}
}

func TestAResizeWaitsForTheGracePeriod(t *testing.T) {
	pod := builder.Pod("p", "ns").Container("main", "web:1").ReadinessGate(appspub.InPlaceUpdateReady).
		Condition(appspub.InPlaceUpdateReady, corev1.ConditionTrue).Obj()
	pod.UID = "uid-1"
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: list("100m", "64Mi"), Limits: list("200m", "128Mi")}
	base := testclient.New(pod)
	resizes := 0
	c := interceptor.NewClient(base.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if sub == "resize" {
				resizes++
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	u := &Updater{Client: c, Reader: base, Clock: clock, RevisionLabel: "controller-revision-hash"}
	plan := &Plan{Revision: "v2", GraceSeconds: 10,
		ContainerResources: map[string]corev1.ResourceRequirements{"main": {Requests: list("150m", "")}}}
	updated, err := u.Update(context.Background(), pod, plan)
	if err != nil {
		t.Fatal(err)
	}
	if resizes != 0 {
		t.Fatalf("%d resizes while the grace period runs, want none", resizes)
	}
	if res, err := u.Refresh(context.Background(), updated); err != nil || !res.Updating || res.RequeueAfter != 10*time.Second {
		t.Fatalf("Refresh in the grace period = %+v, %v; want updating, again in 10s", res, err)
	}
	clock.SetTime(clock.Now().Add(10 * time.Second))
	if _, err := u.Refresh(context.Background(), updated); err != nil {
		t.Fatal(err)
	}
	stored := &corev1.Pod{}
	if err := base.Get(context.Background(), client.ObjectKeyFromObject(pod), stored); err != nil {
		t.Fatal(err)
	}
	if resizes != 1 {
		t.Errorf("%d resizes once the grace period has passed, want 1", resizes)
	}
	testkit.Diff(t, "requests", list("150m", "64Mi"), stored.Spec.Containers[0].Resources.Requests, quantities)
	if _, waiting := stored.Annotations[appspub.InPlaceUpdateGraceKey]; waiting {
		t.Errorf("the grace annotation is still there after the grace period")
	}
}
