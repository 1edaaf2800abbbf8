package kubectlplugin

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func newNamespace(t *testing.T) string {
	t.Helper()
	return framework.NewNamespace(t, env.Client, "kp-", nil)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// same fails the test unless the plugin printed what kubectl printed.
func same(t *testing.T, what string, kubectlOut, pluginOut string) {
	t.Helper()
	if diff := cmp.Diff(kubectlOut, pluginOut); diff != "" {
		t.Errorf("%s: kubectl-kruise differs from kubectl (-kubectl +kubectl-kruise):\n%s", what, diff)
	}
}

// succeeded fails the test now when a command failed.
func succeeded(t *testing.T, r result) result {
	t.Helper()
	if r.failed {
		t.Fatalf("command failed: %s", r.errOut)
	}
	return r
}

// TestOutputMatchesKubectl runs each command with kubectl on a Deployment (and, for rollout
// status, on the built-in kind each workload extends) and with kubectl-kruise on a CloneSet, an
// Advanced StatefulSet and an Advanced DaemonSet, and compares what they print; along the way it
// checks that each command did what it says.
func TestOutputMatchesKubectl(t *testing.T) {
	for _, w := range workloads() {
		t.Run(w.typ, func(t *testing.T) {
			ns := newNamespace(t)
			deploy := workloads()[0].nativeObj(ns)
			framework.Create(t, env.Client, deploy)
			// The built-in counterpart lives in a namespace of its own: a StatefulSet's pods
			// would take the names of the Advanced StatefulSet's.
			nativeNs := ns
			if w.native != "deployment" {
				nativeNs = newNamespace(t)
				framework.Create(t, env.Client, w.nativeObj(nativeNs))
			}
			framework.Create(t, env.Client, w.newObj(ns))
			ours := w.typ + "/web"
			both := func() {
				t.Helper()
				deploymentDone(t, ns)
				w.waitDone(t, ns)
			}
			both()

			// rollout status: the line that ends a finished rollout.
			native := succeeded(t, kubectl(t, nativeNs, "rollout", "status", w.native+"/web", "--timeout=60s"))
			got := succeeded(t, plugin(t, ns, "rollout", "status", ours, "--timeout=60s"))
			wantStatus := native.out
			if w.native == "deployment" {
				wantStatus = strings.ReplaceAll(wantStatus, `deployment "web"`, `cloneset "web"`)
			}
			same(t, "rollout status", w.asNative(lastLine(wantStatus)), w.asNative(lastLine(got.out)))

			// pause and resume, twice each: the second time is an error, as in kubectl.
			for i, op := range []string{"pause", "pause", "resume", "resume"} {
				k := kubectl(t, ns, "rollout", op, "deployment/web")
				p := plugin(t, ns, "rollout", op, ours)
				if again := i%2 == 1; k.failed != again || p.failed != again {
					t.Fatalf("rollout %s (again: %v): kubectl failed=%v, kubectl-kruise failed=%v", op, again, k.failed, p.failed)
				}
				same(t, "rollout "+op, k.out, w.asDeployment(p.out))
				same(t, "rollout "+op+" (stderr)", k.errOut, w.asDeploymentResource(p.errOut))
				wantPaused := op == "pause"
				if paused := pausedOf(w.get(t, ns)); paused != wantPaused {
					t.Fatalf("after rollout %s: paused = %v, want %v", op, paused, wantPaused)
				}
			}

			// restart stamps the template.
			k := succeeded(t, kubectl(t, ns, "rollout", "restart", "deployment/web"))
			p := succeeded(t, plugin(t, ns, "rollout", "restart", ours))
			same(t, "rollout restart", k.out, w.asDeployment(p.out))
			_, annotations := w.template(w.get(t, ns))
			restartedAt := annotations["kubectl.kubernetes.io/restartedAt"]
			if restartedAt == "" {
				t.Fatalf("rollout restart left no kubectl.kubernetes.io/restartedAt on the template: %v", annotations)
			}
			both()

			// set image changes the container's image.
			k = succeeded(t, kubectl(t, ns, "set", "image", "deployment/web", "main="+newImage))
			p = succeeded(t, plugin(t, ns, "set", "image", ours, "main="+newImage))
			same(t, "set image", k.out, w.asDeployment(p.out))
			if image, _ := w.template(w.get(t, ns)); image != newImage {
				t.Fatalf("after set image the template runs %s, want %s", image, newImage)
			}
			both()

			if w.scalable {
				k = succeeded(t, kubectl(t, ns, "scale", "deployment/web", "--replicas=2"))
				p = succeeded(t, plugin(t, ns, "scale", ours, "--replicas=2"))
				same(t, "scale", k.out, w.asDeployment(p.out))
				if n := replicasOf(w.get(t, ns)); n != 2 {
					t.Fatalf("after scale --replicas=2 spec.replicas is %d", n)
				}
				both()
			}

			// history: three revisions (create, restart, set image), as for the Deployment.
			k = succeeded(t, kubectl(t, ns, "rollout", "history", "deployment/web"))
			p = succeeded(t, plugin(t, ns, "rollout", "history", ours))
			same(t, "rollout history", k.out, w.asDeployment(p.out))
			if !strings.Contains(p.out, "\n3 ") {
				t.Errorf("rollout history lists no revision 3:\n%s", p.out)
			}
			k = succeeded(t, kubectl(t, ns, "rollout", "history", "deployment/web", "--revision=2"))
			p = succeeded(t, plugin(t, ns, "rollout", "history", ours, "--revision=2"))
			same(t, "rollout history --revision header", firstLine(k.out)+"\n"+strings.Split(k.out, "\n")[1], firstLine(w.asDeployment(p.out))+"\n"+strings.Split(p.out, "\n")[1])
			for _, want := range []string{oldImage, restartedAt} {
				if !strings.Contains(p.out, want) {
					t.Errorf("revision 2 detail lacks %q:\n%s", want, p.out)
				}
			}

			// undo goes back to revision 2: the old image, and the restart stamp of then.
			k = succeeded(t, kubectl(t, ns, "rollout", "undo", "deployment/web"))
			p = succeeded(t, plugin(t, ns, "rollout", "undo", ours))
			same(t, "rollout undo", k.out, w.asDeployment(p.out))
			image, annotations := w.template(w.get(t, ns))
			if image != oldImage || annotations["kubectl.kubernetes.io/restartedAt"] != restartedAt {
				t.Fatalf("after undo the template runs %s with restartedAt %q, want %s with %q", image, annotations["kubectl.kubernetes.io/restartedAt"], oldImage, restartedAt)
			}
			both()
			k = succeeded(t, kubectl(t, ns, "rollout", "history", "deployment/web"))
			p = succeeded(t, plugin(t, ns, "rollout", "history", ours))
			same(t, "rollout history after undo", k.out, w.asDeployment(p.out))

			// undo to a revision that does not exist fails on both.
			k = kubectl(t, ns, "rollout", "undo", "deployment/web", "--to-revision=99")
			p = plugin(t, ns, "rollout", "undo", ours, "--to-revision=99")
			if !k.failed || !p.failed || !strings.Contains(p.errOut, "unable to find specified revision 99 in history") {
				t.Errorf("undo --to-revision=99: kubectl failed=%v, kubectl-kruise failed=%v with %q; want both to fail naming the revision", k.failed, p.failed, p.errOut)
			}
		})
	}
}

// pausedOf reads the pause switch of each kind.
func pausedOf(obj client.Object) bool {
	switch o := obj.(type) {
	case *appsv1alpha1.CloneSet:
		return o.Spec.UpdateStrategy.Paused
	case *appsv1beta1.StatefulSet:
		return o.Spec.UpdateStrategy.RollingUpdate != nil && o.Spec.UpdateStrategy.RollingUpdate.Paused
	case *appsv1alpha1.DaemonSet:
		ru := o.Spec.UpdateStrategy.RollingUpdate
		return ru != nil && ru.Paused != nil && *ru.Paused
	}
	panic(fmt.Sprintf("unexpected kind %T", obj))
}

// TestRolloutStatus follows a paused, then resumed, in-place update: with --watch=false it
// reports the wait and exits 0, it fails on --timeout while the rollout cannot finish, and it
// exits 0 once the update is done.
func TestRolloutStatus(t *testing.T) {
	for _, w := range workloads() {
		t.Run(w.typ, func(t *testing.T) {
			ns := newNamespace(t)
			var deployOut string
			if w.native == "deployment" {
				framework.Create(t, env.Client, w.nativeObj(ns))
				deploymentDone(t, ns)
			}
			framework.Create(t, env.Client, w.newObj(ns))
			w.waitDone(t, ns)
			ours := w.typ + "/web"
			succeeded(t, plugin(t, ns, "rollout", "pause", ours))
			succeeded(t, plugin(t, ns, "set", "image", ours, "main="+newImage))
			if w.native == "deployment" {
				succeeded(t, kubectl(t, ns, "rollout", "pause", "deployment/web"))
				succeeded(t, kubectl(t, ns, "set", "image", "deployment/web", "main="+newImage))
			}
			// The controller first observes the new generation; the wait it then reports is for
			// pods of the new revision, which the pause holds back.
			var got result
			framework.Eventually(t, framework.Medium, "rollout status to report the paused update", func(_ context.Context) error {
				got = plugin(t, ns, "rollout", "status", ours, "--watch=false")
				if got.failed {
					return fmt.Errorf("rollout status --watch=false failed: %s", got.errOut)
				}
				return framework.Want(!strings.Contains(got.out, "spec update to be observed"), "generation not yet observed")
			})
			if !strings.HasPrefix(got.out, "Waiting for ") {
				t.Fatalf("rollout status --watch=false on a paused update printed %q, want a Waiting line", got.out)
			}
			if w.native == "deployment" {
				framework.Eventually(t, framework.Medium, "kubectl to report the paused deployment", func(_ context.Context) error {
					deployOut = kubectl(t, ns, "rollout", "status", "deployment/web", "--watch=false").out
					return framework.Want(!strings.Contains(deployOut, "spec update to be observed"), "generation not yet observed")
				})
				same(t, "rollout status --watch=false", strings.ReplaceAll(deployOut, `deployment "web"`, `cloneset "web"`), got.out)
			}

			timedOut := plugin(t, ns, "rollout", "status", ours, "--timeout=2s")
			if !timedOut.failed || !strings.Contains(timedOut.errOut, "error: timed out waiting for the condition") {
				t.Fatalf("rollout status on a paused update: failed=%v stderr=%q, want a timeout error", timedOut.failed, timedOut.errOut)
			}

			succeeded(t, plugin(t, ns, "rollout", "resume", ours))
			done := succeeded(t, plugin(t, ns, "rollout", "status", ours, "--timeout="+settle.String()))
			if !strings.HasPrefix(done.out, "Waiting for ") {
				t.Errorf("rollout status printed no progress before the end:\n%s", done.out)
			}
			if err := w.done(w.get(t, ns)); err != nil {
				t.Errorf("rollout status exited 0 before the rollout was done: %v", err)
			}
			if image, _ := w.template(w.get(t, ns)); image != newImage {
				t.Errorf("template runs %s, want %s", image, newImage)
			}
		})
	}
}

// TestRolloutStatusPartition: with a partition, rollout status is complete once the pods above
// it are updated, and says so as kubectl does for a partitioned StatefulSet.
func TestRolloutStatusPartition(t *testing.T) {
	ns := newNamespace(t)
	framework.Create(t, env.Client, kinds.CloneSet("web", ns).Replicas(3).Image(oldImage).
		UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).Partition(intstr.FromInt32(1)).Obj())
	w := workloads()[0]
	w.waitDone(t, ns)
	succeeded(t, plugin(t, ns, "set", "image", "cloneset/web", "main="+newImage))
	got := succeeded(t, plugin(t, ns, "rollout", "status", "cloneset/web", "--timeout="+settle.String()))
	if want := "partitioned roll out complete: 2 new pods have been updated...\n"; lastLine(got.out)+"\n" != want {
		t.Errorf("rollout status ended with %q, want %q", lastLine(got.out), want)
	}
}

// TestBadInput: wrong arguments and flags fail with exit 1 and an error that names the
// problem and what would be valid.
func TestBadInput(t *testing.T) {
	ns := newNamespace(t)
	framework.Create(t, env.Client, kinds.CloneSet("web", ns).Replicas(1).Image(oldImage).Obj())
	framework.Create(t, env.Client, kinds.DaemonSet("agent", ns).Image(oldImage).Obj())
	tests := map[string]struct {
		args    []string
		wantErr string
	}{
		"an unknown resource type lists the accepted ones": {
			args: []string{"rollout", "status", "job/web"}, wantErr: `error: resource type "job" is not supported: use one of ads,`,
		},
		"scale without --replicas asks for it": {
			args: []string{"scale", "cloneset/web"}, wantErr: "error: the --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0",
		},
		"a DaemonSet cannot be scaled": {
			args: []string{"scale", "ads/agent", "--replicas=3"}, wantErr: "error: daemonset.apps.kruise.io/agent cannot be scaled: a DaemonSet runs one pod on each eligible node; scale applies to clonesets and statefulsets",
		},
		"set image of a container the template lacks names it": {
			args: []string{"set", "image", "cloneset/web", "sidecar=envoy:1"}, wantErr: `unable to find container named "sidecar"`,
		},
		"history of a revision that does not exist says so": {
			args: []string{"rollout", "history", "cloneset/web", "--revision=99"}, wantErr: "error: unable to find the specified revision 99 of cloneset.apps.kruise.io/web",
		},
		"a workload that does not exist is named": {
			args: []string{"rollout", "status", "cloneset/nope"}, wantErr: `error: get cloneset.apps.kruise.io "nope": clonesets.apps.kruise.io "nope" not found`,
		},
		"a negative timeout is refused": {
			args: []string{"rollout", "status", "cloneset/web", "--timeout=-1s"}, wantErr: "error: invalid --timeout -1s: must be 0 (wait for ever) or a positive duration such as 5m",
		},
		"an unknown flag is named": {
			args: []string{"rollout", "undo", "cloneset/web", "--to-revison=1"}, wantErr: "error: unknown flag: --to-revison",
		},
		"a flag of kubectl's that only built-in workloads take is refused on the add-on's": {
			args: []string{"rollout", "undo", "cloneset/web", "--dry-run=server"}, wantErr: "error: --dry-run: only for Deployments, StatefulSets (statefulset.apps) and DaemonSets (daemonset.apps)",
		},
		"an unknown output format lists the valid ones": {
			args: []string{"rollout", "pause", "cloneset/web", "-o", "table"}, wantErr: `error: unable to match a printer suitable for the output format "table", allowed formats are:`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := plugin(t, ns, tc.args...)
			if !got.failed {
				t.Fatalf("kubectl-kruise %v succeeded, want exit 1", tc.args)
			}
			if !strings.Contains(got.errOut, tc.wantErr) {
				t.Errorf("stderr %q does not contain %q", got.errOut, tc.wantErr)
			}
		})
	}
}

// TestDescribe shows each kind's rollout state: replicas, partition, paused, its revisions and
// conditions and events.
func TestDescribe(t *testing.T) {
	ns := newNamespace(t)
	for _, w := range workloads() {
		framework.Create(t, env.Client, w.newObj(ns))
	}
	for _, w := range workloads() {
		t.Run(w.typ, func(t *testing.T) {
			w.waitDone(t, ns)
			succeeded(t, plugin(t, ns, "rollout", "pause", w.typ+"/web"))
			got := succeeded(t, plugin(t, ns, "describe", w.typ, "web"))
			rev := revisionOf(w.get(t, ns))
			wants := []string{"Name:", "web", "Kind:", w.qualified, "Partition:", "Paused:", "true", "Revisions:", rev, "Pod Template:", "Image:", oldImage, "Events:"}
			if w.scalable {
				wants = append(wants, "3 desired | 3 updated")
			} else {
				wants = append(wants, "Desired Number of Nodes Scheduled:")
			}
			if !w.scalable && !regexp.MustCompile(fmt.Sprintf(`Desired Number of Nodes Scheduled:\s+%d\n`, nodeCount)).MatchString(got.out) {
				t.Errorf("describe does not count %d nodes:\n%s", nodeCount, got.out)
			}
			for _, want := range wants {
				if !strings.Contains(got.out, want) {
					t.Errorf("describe lacks %q:\n%s", want, got.out)
				}
			}
			// The three kinds share a name and a selector here; each lists only its own revision.
			if revs := describedRevisions(got.out); len(revs) != 1 || revs[0] != rev {
				t.Errorf("describe lists revisions %q, want only %s", revs, rev)
			}
		})
	}
}

// revisionOf is the name of the workload's current update revision.
func revisionOf(obj client.Object) string {
	switch o := obj.(type) {
	case *appsv1alpha1.CloneSet:
		return o.Status.UpdateRevision
	case *appsv1beta1.StatefulSet:
		return o.Status.UpdateRevision
	case *appsv1alpha1.DaemonSet:
		return "web-" + o.Status.DaemonSetHash
	}
	panic(fmt.Sprintf("unexpected kind %T", obj))
}

// TestOutputFlag: -o prints the object as kubectl's printers do, instead of the sentence.
func TestOutputFlag(t *testing.T) {
	ns := newNamespace(t)
	framework.Create(t, env.Client, kinds.CloneSet("web", ns).Replicas(1).Image(oldImage).Obj())
	got := succeeded(t, plugin(t, ns, "rollout", "pause", "cloneset/web", "-o", "name"))
	if want := "cloneset.apps.kruise.io/web\n"; got.out != want {
		t.Errorf("-o name printed %q, want %q", got.out, want)
	}
	got = succeeded(t, plugin(t, ns, "scale", "cloneset/web", "--replicas=2", "-o", "jsonpath={.kind} {.spec.replicas}"))
	if want := "CloneSet 2"; got.out != want {
		t.Errorf("-o jsonpath printed %q, want %q", got.out, want)
	}
}

// describedRevisions are the names in describe's Revisions table.
func describedRevisions(out string) []string {
	_, table, ok := strings.Cut(out, "  --------  ----\n")
	if !ok {
		return nil
	}
	var names []string
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if !strings.HasPrefix(line, "  ") || len(f) != 2 {
			break
		}
		names = append(names, f[1])
	}
	return names
}

func replicasOf(obj client.Object) int32 {
	switch o := obj.(type) {
	case *appsv1alpha1.CloneSet:
		return *o.Spec.Replicas
	case *appsv1beta1.StatefulSet:
		return *o.Spec.Replicas
	}
	panic(fmt.Sprintf("unexpected kind %T", obj))
}

// TestRestartTwiceInOneSecond: the restart stamp has a resolution of one second, so a second
// restart within it changes nothing and fails, as in kubectl, instead of claiming a restart.
func TestRestartTwiceInOneSecond(t *testing.T) {
	ns := newNamespace(t)
	framework.Create(t, env.Client, kinds.CloneSet("web", ns).Replicas(1).Image(oldImage).Obj())
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { return at }
	succeeded(t, pluginWith(t, ns, clock, "rollout", "restart", "cloneset/web"))
	if _, ann := workloads()[0].template(workloads()[0].get(t, ns)); ann["kubectl.kubernetes.io/restartedAt"] != "2026-01-02T03:04:05Z" {
		t.Fatalf("restartedAt = %q, want the clock's time", ann["kubectl.kubernetes.io/restartedAt"])
	}
	again := pluginWith(t, ns, clock, "rollout", "restart", "cloneset/web")
	want := "error: failed to create patch for web: if restart has already been triggered within the past second, please wait before attempting to trigger another\n"
	if !again.failed || again.errOut != want || again.out != "" {
		t.Errorf("second restart: failed=%v out=%q stderr=%q, want exit 1 with %q", again.failed, again.out, again.errOut, want)
	}
}

// TestUndoPausedIsRefused: rollout undo of a paused workload fails, leaves the template as it
// is and names rollout resume, in the words kubectl uses for a paused Deployment.
func TestUndoPausedIsRefused(t *testing.T) {
	ns := newNamespace(t)
	framework.Create(t, env.Client, workloads()[0].nativeObj(ns))
	deploymentDone(t, ns)
	succeeded(t, kubectl(t, ns, "set", "image", "deployment/web", "main="+newImage))
	succeeded(t, kubectl(t, ns, "rollout", "pause", "deployment/web"))
	k := kubectl(t, ns, "rollout", "undo", "deployment/web")
	if !k.failed {
		t.Fatalf("kubectl rollout undo of a paused deployment succeeded")
	}
	for _, w := range workloads() {
		t.Run(w.typ, func(t *testing.T) {
			ns := newNamespace(t)
			framework.Create(t, env.Client, w.newObj(ns))
			w.waitDone(t, ns)
			ours := w.typ + "/web"
			succeeded(t, plugin(t, ns, "set", "image", ours, "main="+newImage))
			succeeded(t, plugin(t, ns, "rollout", "pause", ours))
			p := plugin(t, ns, "rollout", "undo", ours)
			if !p.failed {
				t.Fatalf("rollout undo of a paused %s succeeded", w.typ)
			}
			want := strings.NewReplacer("paused deployment", "paused "+nounOf(w), "'kubectl rollout", "'kubectl kruise rollout").Replace(k.errOut)
			same(t, "rollout undo of a paused workload (stderr)", want, p.errOut)
			if image, _ := w.template(w.get(t, ns)); image != newImage {
				t.Errorf("after the refused undo the template runs %s, want %s", image, newImage)
			}
		})
	}
}

// nounOf is the kind as the plugin's sentences name it.
func nounOf(w workload) string {
	kind, _, _ := strings.Cut(w.qualified, ".")
	if kind == "daemonset" {
		return "daemon set"
	}
	return kind
}

// TestRolloutOfBuiltInWorkloadsIsKubectls: rollout status, pause, resume, restart, history and
// undo on a Deployment, a StatefulSet and a DaemonSet do and print exactly what kubectl's do,
// failures included. kubectl works on one copy of the workload and kubectl-kruise on another,
// each in a namespace of its own.
func TestRolloutOfBuiltInWorkloadsIsKubectls(t *testing.T) {
	for _, w := range workloads() {
		typ := map[string]string{"deployment": "deployment", "statefulset": "statefulset.apps", "daemonset": "daemonset.apps"}[w.native]
		t.Run(typ, func(t *testing.T) {
			nsK, nsP := newNamespace(t), newNamespace(t)
			framework.Create(t, env.Client, w.nativeObj(nsK))
			framework.Create(t, env.Client, w.nativeObj(nsP))
			ref := typ + "/web"
			run := func(what string, args ...string) (k, p result) {
				t.Helper()
				k = kubectl(t, nsK, append([]string{"rollout"}, args...)...)
				p = plugin(t, nsP, append([]string{"rollout"}, args...)...)
				if k.failed != p.failed {
					t.Fatalf("%s: kubectl failed=%v, kubectl-kruise failed=%v", what, k.failed, p.failed)
				}
				same(t, what+" (stderr)", k.errOut, p.errOut)
				return k, p
			}
			status := func(what string) {
				t.Helper()
				k, p := run(what, "status", ref, "--timeout="+settle.String())
				same(t, what, lastLine(k.out), lastLine(p.out))
				if p.failed {
					t.Fatalf("%s failed: %s", what, p.errOut)
				}
			}
			whole := func(what string, args ...string) {
				t.Helper()
				k, p := run(what, args...)
				same(t, what, k.out, p.out)
			}
			status("rollout status")
			whole("rollout pause", "pause", ref)
			whole("rollout resume", "resume", ref)
			whole("rollout restart", "restart", ref)
			if ann := nativeTemplate(t, w, nsP).Annotations; ann["kubectl.kubernetes.io/restartedAt"] == "" {
				t.Errorf("rollout restart left no kubectl.kubernetes.io/restartedAt on the template: %v", ann)
			}
			status("rollout status after restart")
			whole("rollout history", "history", ref)
			whole("rollout history --revision=1", "history", ref, "--revision=1")
			whole("rollout undo", "undo", ref)
			if ann := nativeTemplate(t, w, nsP).Annotations; ann["kubectl.kubernetes.io/restartedAt"] != "" {
				t.Errorf("rollout undo kept the restart stamp of revision 2: %v", ann)
			}
			status("rollout status after undo")
			whole("rollout history after undo", "history", ref)
			whole("rollout undo --to-revision=99", "undo", ref, "--to-revision=99")
			k, p := kubectl(t, nsK, "scale", ref, "--replicas=2"), plugin(t, nsP, "scale", ref, "--replicas=2")
			if k.failed != p.failed {
				t.Fatalf("scale: kubectl failed=%v, kubectl-kruise failed=%v", k.failed, p.failed)
			}
			same(t, "scale", k.out, p.out)
			same(t, "scale (stderr)", k.errOut, p.errOut)
			// kubectl's flags that the plugin's own commands lack work on built-in workloads.
			whole("rollout undo --dry-run=server", "undo", ref, "--dry-run=server")
			if ann := nativeTemplate(t, w, nsP).Annotations; ann["kubectl.kubernetes.io/restartedAt"] != "" {
				t.Errorf("rollout undo --dry-run=server rolled back to the restart of revision 2: %v", ann)
			}
		})
	}
}

// nativeTemplate reads the pod template of the built-in counterpart of w named web in ns.
func nativeTemplate(t *testing.T, w workload, ns string) corev1.PodTemplateSpec {
	t.Helper()
	obj := w.nativeObj(ns)
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatalf("get %s web: %v", w.native, err)
	}
	return templateSpec(obj)
}

// TestScaleDownDeletesChosenPods: scaledown lowers replicas and has the CloneSet delete the
// pods named, keeping the others; a pod the CloneSet does not own is refused before any write.
func TestScaleDownDeletesChosenPods(t *testing.T) {
	ns := newNamespace(t)
	w := workloads()[0]
	framework.Create(t, env.Client, w.newObj(ns))
	w.waitDone(t, ns)
	before := podNames(t, ns)
	if len(before) != 3 {
		t.Fatalf("cloneset runs pods %v, want 3", before)
	}
	chosen, kept := before[1], []string{before[0], before[2]}

	framework.Create(t, env.Client, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "stray", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: oldImage}}}})
	stray := plugin(t, ns, "scaledown", "cloneset/web", "--pods=stray")
	if want := "error: cloneset.apps.kruise.io/web: --pods stray: the pod does not belong to cloneset web"; !stray.failed || !strings.HasPrefix(stray.errOut, want) {
		t.Errorf("scaledown of a stray pod: failed=%v stderr=%q, want it refused with %q", stray.failed, stray.errOut, want)
	}
	if n := replicasOf(w.get(t, ns)); n != 3 {
		t.Fatalf("the refused scaledown changed replicas to %d", n)
	}

	got := succeeded(t, plugin(t, ns, "scaledown", "cloneset/web", "--pods="+chosen))
	if want := "cloneset.apps.kruise.io/web scaled down, deleting pods " + chosen + "\n"; got.out != want {
		t.Errorf("scaledown printed %q, want %q", got.out, want)
	}
	if n := replicasOf(w.get(t, ns)); n != 2 {
		t.Errorf("after scaledown of one pod replicas = %d, want 2", n)
	}
	framework.Eventually(t, settle, "the chosen pod deleted and the others kept", func(context.Context) error {
		after := podNames(t, ns)
		return framework.Want(cmp.Equal(after, kept), fmt.Sprintf("pods %v, want %v", after, kept))
	})
}

// podNames lists the names of the live pods of the CloneSet web in ns, sorted.
func podNames(t *testing.T, ns string) []string {
	t.Helper()
	var names []string
	for _, p := range framework.MustLivePods(t, env.Client, ns, "web") {
		names = append(names, p.Name)
	}
	return names
}

// TestSetCommandsMatchKubectl: set env, resources and serviceaccount change the template of
// each kind and print what kubectl prints for a Deployment; on a Deployment the plugin's set
// commands are kubectl's.
func TestSetCommandsMatchKubectl(t *testing.T) {
	steps := []struct {
		what string
		args func(ref string) []string
	}{
		{"set env", func(ref string) []string { return []string{"set", "env", ref, "GREETING=hello"} }},
		{"set env again changes nothing", func(ref string) []string { return []string{"set", "env", ref, "GREETING=hello"} }},
		{"set env --list", func(ref string) []string { return []string{"set", "env", ref, "--list"} }},
		{"set resources", func(ref string) []string { return []string{"set", "resources", ref, "--limits=cpu=200m,memory=64Mi"} }},
		{"set serviceaccount", func(ref string) []string { return []string{"set", "serviceaccount", ref, "builder"} }},
		{"set env -o name", func(ref string) []string { return []string{"set", "env", ref, "MODE=fast", "-o", "name"} }},
	}
	for _, w := range workloads() {
		t.Run(w.typ, func(t *testing.T) {
			ns := newNamespace(t)
			framework.Create(t, env.Client, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder", Namespace: ns}})
			framework.Create(t, env.Client, workloads()[0].nativeObj(ns))
			framework.Create(t, env.Client, w.newObj(ns))
			plainNs := newNamespace(t)
			framework.Create(t, env.Client, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder", Namespace: plainNs}})
			framework.Create(t, env.Client, workloads()[0].nativeObj(plainNs))
			for _, step := range steps {
				k := kubectl(t, ns, step.args("deployment/web")...)
				p := plugin(t, ns, step.args(w.typ+"/web")...)
				if k.failed || p.failed {
					t.Fatalf("%s: kubectl failed=%v (%s), kubectl-kruise failed=%v (%s)", step.what, k.failed, k.errOut, p.failed, p.errOut)
				}
				same(t, step.what, k.out, listedKind.ReplaceAllString(w.asDeployment(p.out), "# Deployment web"))
				// The plugin hands a Deployment to kubectl's command.
				same(t, step.what+" on a Deployment", k.out, succeeded(t, plugin(t, plainNs, step.args("deployment/web")...)).out)
			}
			tmpl := templateSpec(w.get(t, ns))
			c := tmpl.Spec.Containers[0]
			if diff := cmp.Diff([]corev1.EnvVar{{Name: "GREETING", Value: "hello"}, {Name: "MODE", Value: "fast"}}, c.Env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			if got := c.Resources.Limits.Cpu().String() + " " + c.Resources.Limits.Memory().String(); got != "200m 64Mi" {
				t.Errorf("limits are %s, want 200m 64Mi", got)
			}
			if tmpl.Spec.ServiceAccountName != "builder" {
				t.Errorf("serviceAccountName is %q, want builder", tmpl.Spec.ServiceAccountName)
			}
		})
	}
}

// listedKind is the kind set env --list names each workload by.
var listedKind = regexp.MustCompile(`(?m)^# \w+ web`)

// templateSpec is the pod template (spec.template) of any workload.
func templateSpec(obj client.Object) corev1.PodTemplateSpec {
	var tmpl corev1.PodTemplateSpec
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err == nil {
		m, _, _ := unstructured.NestedMap(u, "spec", "template")
		err = runtime.DefaultUnstructuredConverter.FromUnstructured(m, &tmpl)
	}
	if err != nil {
		panic(fmt.Sprintf("read spec.template of %T: %v", obj, err))
	}
	return tmpl
}

// TestCreateFromAdvancedCronJob: create job --from=acj/NAME makes a Job of the AdvancedCronJob's
// jobTemplate, owned by it and marked manual, and prints what kubectl prints for
// --from=cronjob/NAME; create broadcastjob does the same for a broadcastJobTemplate, or runs an
// image; a template of the other kind is refused naming the right command.
func TestCreateFromAdvancedCronJob(t *testing.T) {
	ns, cronNs := newNamespace(t), newNamespace(t)
	acj := kinds.AdvancedCronJob("nightly", ns).Schedule("0 0 1 1 *").Obj()
	acj.Spec.Template.JobTemplate.Labels = map[string]string{"team": "night"}
	framework.Create(t, env.Client, acj)
	framework.Create(t, env.Client, &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: cronNs},
		Spec: batchv1.CronJobSpec{Schedule: "0 0 1 1 *", JobTemplate: *acj.Spec.Template.JobTemplate}})
	framework.Create(t, env.Client, kinds.AdvancedCronJob("fleet", ns).Schedule("0 0 1 1 *").BroadcastJob().Obj())

	k := succeeded(t, kubectl(t, cronNs, "create", "job", "manual", "--from=cronjob/nightly"))
	p := succeeded(t, plugin(t, ns, "create", "job", "manual", "--from=acj/nightly"))
	same(t, "create job --from", k.out, p.out)
	job := &batchv1.Job{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "manual"}, job); err != nil {
		t.Fatalf("get job manual: %v", err)
	}
	owner := metav1.GetControllerOf(job)
	if owner == nil || owner.Kind != "AdvancedCronJob" || owner.Name != "nightly" || job.Annotations["cronjob.kubernetes.io/instantiate"] != "manual" || job.Labels["team"] != "night" {
		t.Errorf("job manual: controller %+v, annotations %v, labels %v; want the AdvancedCronJob nightly, the manual mark and the template's labels", owner, job.Annotations, job.Labels)
	}
	if image := job.Spec.Template.Spec.Containers[0].Image; image != acj.Spec.Template.JobTemplate.Spec.Template.Spec.Containers[0].Image {
		t.Errorf("job manual runs %s, want the template's image", image)
	}

	p = succeeded(t, plugin(t, ns, "create", "broadcastjob", "fleet-manual", "--from=acj/fleet"))
	if want := "broadcastjob.apps.kruise.io/fleet-manual created\n"; p.out != want {
		t.Errorf("create broadcastjob --from printed %q, want %q", p.out, want)
	}
	bcj := &appsv1alpha1.BroadcastJob{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "fleet-manual"}, bcj); err != nil {
		t.Fatalf("get broadcastjob fleet-manual: %v", err)
	}
	if owner := metav1.GetControllerOf(bcj); owner == nil || owner.Name != "fleet" {
		t.Errorf("broadcastjob fleet-manual is controlled by %+v, want the AdvancedCronJob fleet", owner)
	}
	succeeded(t, plugin(t, ns, "create", "bcj", "dates", "--image=busybox", "--", "date"))
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "dates"}, bcj); err != nil {
		t.Fatalf("get broadcastjob dates: %v", err)
	}
	if c := bcj.Spec.Template.Spec.Containers[0]; c.Image != "busybox" || !cmp.Equal(c.Command, []string{"date"}) {
		t.Errorf("broadcastjob dates runs %s %v, want busybox [date]", c.Image, c.Command)
	}

	wrong := plugin(t, ns, "create", "job", "x", "--from=acj/fleet")
	if want := "error: --from acj/fleet: the AdvancedCronJob has no spec.template.jobTemplate; for a broadcastJobTemplate use create broadcastjob\n"; !wrong.failed || wrong.errOut != want {
		t.Errorf("create job from a broadcastJobTemplate: failed=%v stderr=%q, want %q", wrong.failed, wrong.errOut, want)
	}
}

// TestCreateContainerRecreateRequest: create crr asks to recreate the named containers of a
// pod, or all of them, and names a container the pod lacks.
func TestCreateContainerRecreateRequest(t *testing.T) {
	ns := newNamespace(t)
	framework.Create(t, env.Client, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: oldImage}, {Name: "sidecar", Image: oldImage}}}})
	tests := map[string]struct {
		args           []string
		wantContainers []string
		wantErr        string
	}{
		"every container by default": {args: []string{"all", "--pod=web-0"}, wantContainers: []string{"main", "sidecar"}},
		"only the containers named":  {args: []string{"one", "-p", "web-0", "--containers=sidecar"}, wantContainers: []string{"sidecar"}},
		"a container the pod lacks is named": {
			args: []string{"bad", "--pod=web-0", "--containers=db"}, wantErr: "error: --containers db: pod web-0 has no such container; it has main, sidecar\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := plugin(t, ns, append([]string{"create", "crr"}, tc.args...)...)
			if tc.wantErr != "" {
				if !got.failed || got.errOut != tc.wantErr {
					t.Errorf("failed=%v stderr=%q, want %q", got.failed, got.errOut, tc.wantErr)
				}
				return
			}
			succeeded(t, got)
			if want := "containerrecreaterequest.apps.kruise.io/" + tc.args[0] + " created\n"; got.out != want {
				t.Errorf("printed %q, want %q", got.out, want)
			}
			crr := &appsv1alpha1.ContainerRecreateRequest{}
			if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: tc.args[0]}, crr); err != nil {
				t.Fatalf("get crr: %v", err)
			}
			var names []string
			for _, c := range crr.Spec.Containers {
				names = append(names, c.Name)
			}
			if crr.Spec.PodName != "web-0" || !cmp.Equal(names, tc.wantContainers) {
				t.Errorf("crr asks for pod %s containers %v, want web-0 %v", crr.Spec.PodName, names, tc.wantContainers)
			}
		})
	}
}

// TestMigrateDeploymentToCloneSet: migrate --create makes an empty CloneSet of the
// Deployment's template; migrate then moves every replica over, the CloneSet out by max surge
// and the Deployment in once the new pods are available, and reports each step.
func TestMigrateDeploymentToCloneSet(t *testing.T) {
	ns := newNamespace(t)
	framework.Create(t, env.Client, workloads()[0].nativeObj(ns))
	deploymentDone(t, ns)
	flags := []string{"migrate", "cloneset", "--from=deployment", "--src-name=web", "--dst-name=web-cs"}

	got := succeeded(t, plugin(t, ns, append(flags, "--create")...))
	if want := "Successfully created from Deployment/web to CloneSet/web-cs\n"; got.out != want {
		t.Errorf("migrate --create printed %q, want %q", got.out, want)
	}
	cs := &appsv1alpha1.CloneSet{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web-cs"}, cs); err != nil {
		t.Fatalf("get cloneset web-cs: %v", err)
	}
	if *cs.Spec.Replicas != 0 || cs.Spec.Template.Spec.Containers[0].Image != oldImage {
		t.Errorf("created cloneset has %d replicas of %s, want 0 of %s", *cs.Spec.Replicas, cs.Spec.Template.Spec.Containers[0].Image, oldImage)
	}
	again := plugin(t, ns, append(flags, "--create")...)
	if want := "error: --dst-name web-cs: cloneset " + ns + "/web-cs already exists; leave out --create to move replicas into it\n"; !again.failed || again.errOut != want {
		t.Errorf("second migrate --create: failed=%v stderr=%q, want %q", again.failed, again.errOut, want)
	}

	got = succeeded(t, plugin(t, ns, append(flags, "--max-surge=2", "--timeout-seconds=120")...))
	wantLines := []string{
		"Migration progress: Deployment/web scale in 0, CloneSet/web-cs scale out 2",
		"Migration progress: Deployment/web scale in 2, CloneSet/web-cs scale out 2",
		"Migration progress: Deployment/web scale in 2, CloneSet/web-cs scale out 3",
		"Migration progress: Deployment/web scale in 3, CloneSet/web-cs scale out 3",
		"Successfully migrated 3 replicas from Deployment/web to CloneSet/web-cs",
	}
	if diff := cmp.Diff(strings.Join(wantLines, "\n")+"\n", got.out); diff != "" {
		t.Errorf("migrate printed (-want +got):\n%s", diff)
	}
	d := &appsv1.Deployment{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, d); err != nil {
		t.Fatalf("get deployment web: %v", err)
	}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web-cs"}, cs); err != nil {
		t.Fatalf("get cloneset web-cs: %v", err)
	}
	if *d.Spec.Replicas != 0 || *cs.Spec.Replicas != 3 {
		t.Errorf("after migrate the deployment has %d replicas and the cloneset %d, want 0 and 3", *d.Spec.Replicas, *cs.Spec.Replicas)
	}
}

// TestExposeMatchesKubectl: expose makes a Service of each kind's selector, as kubectl's does
// for a Deployment, and prints what kubectl prints.
func TestExposeMatchesKubectl(t *testing.T) {
	nsK := newNamespace(t)
	framework.Create(t, env.Client, workloads()[0].nativeObj(nsK))
	k := succeeded(t, kubectl(t, nsK, "expose", "deployment", "web", "--port=80", "--target-port=8080"))
	for _, w := range workloads() {
		t.Run(w.typ, func(t *testing.T) {
			ns := newNamespace(t)
			framework.Create(t, env.Client, w.newObj(ns))
			p := succeeded(t, plugin(t, ns, "expose", w.typ, "web", "--port=80", "--target-port=8080"))
			same(t, "expose", k.out, p.out)
			svc := &corev1.Service{}
			if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, svc); err != nil {
				t.Fatalf("get service web: %v", err)
			}
			var sel map[string]string
			switch o := w.get(t, ns).(type) {
			case *appsv1alpha1.CloneSet:
				sel = o.Spec.Selector.MatchLabels
			case *appsv1beta1.StatefulSet:
				sel = o.Spec.Selector.MatchLabels
			case *appsv1alpha1.DaemonSet:
				sel = o.Spec.Selector.MatchLabels
			}
			if !cmp.Equal(svc.Spec.Selector, sel) || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].TargetPort.IntValue() != 8080 {
				t.Errorf("service web selects %v on %+v, want the workload's selector %v on 80 -> 8080", svc.Spec.Selector, svc.Spec.Ports, sel)
			}
		})
	}
}

// TestExecIntoWorkingSidecar: exec -S picks, of a hot-upgrade sidecar's two containers, the one
// the pod's annotation says is working, says so, and hands it to kubectl's exec as -c, which
// checks it against the pod's containers. The test bed's nodes run no kubelet, so an exec into
// a container that exists then fails on the connection.
func TestExecIntoWorkingSidecar(t *testing.T) {
	ns := newNamespace(t)
	for pod, working := range map[string]string{"web-0": "log-2", "web-1": "log-9"} {
		framework.Create(t, env.Client, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: ns,
				Annotations: map[string]string{appsv1alpha1.SidecarSetWorkingHotUpgradeContainer: `{"log":"` + working + `"}`}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: oldImage}, {Name: "log-1", Image: oldImage}, {Name: "log-2", Image: oldImage}}},
		})
	}
	got := plugin(t, ns, "exec", "web-0", "-S", "log", "--", "date")
	if !got.failed || !strings.HasPrefix(got.errOut, "Enter working container log-2 of SidecarSet.\nerror: ") || strings.Contains(got.errOut, "is not valid") {
		t.Errorf("exec -S log into web-0: failed=%v stderr=%q, want it to enter log-2 (and fail on the connection)", got.failed, got.errOut)
	}
	got = plugin(t, ns, "exec", "web-1", "-S", "log", "--", "date")
	if want := "Enter working container log-9 of SidecarSet.\nerror: container log-9 is not valid for pod web-1 out of: main, log-1, log-2\n"; !got.failed || got.errOut != want {
		t.Errorf("exec -S log into web-1: failed=%v stderr=%q, want %q", got.failed, got.errOut, want)
	}
	// A workload's pod is chosen as kubectl chooses a Deployment's; it has no hot-upgrade
	// sidecar, so -S names the container itself.
	framework.Create(t, env.Client, kinds.CloneSet("app", ns).Replicas(1).Image(oldImage).Obj())
	workloads()[0].waitDoneNamed(t, ns, "app")
	got = plugin(t, ns, "exec", "cloneset/app", "-S", "log", "--", "date")
	if want := "error: container log is not valid for pod app-"; !got.failed || !strings.HasPrefix(got.errOut, want) || !strings.HasSuffix(got.errOut, " out of: main\n") {
		t.Errorf("exec -S log into cloneset/app: failed=%v stderr=%q, want %q... naming the CloneSet's pod", got.failed, got.errOut, want)
	}
	both := plugin(t, ns, "exec", "web-0", "-S", "log", "-c", "main", "--", "date")
	if want := "error: -c and -S both name the container: give one\n"; !both.failed || both.errOut != want {
		t.Errorf("exec -S with -c: failed=%v stderr=%q, want %q", both.failed, both.errOut, want)
	}
}

// TestSetSelectorAndSubjectAreKubectls: set selector and set subject, which touch Services and
// role bindings rather than workloads, do and print what kubectl's do.
func TestSetSelectorAndSubjectAreKubectls(t *testing.T) {
	nsK, nsP := newNamespace(t), newNamespace(t)
	for _, ns := range []string{nsK, nsP} {
		framework.Create(t, env.Client, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "old"}, Ports: []corev1.ServicePort{{Port: 80}}}})
		framework.Create(t, env.Client, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "readers", Namespace: ns},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}})
	}
	for _, args := range [][]string{
		{"set", "selector", "service/web", "app=web"},
		{"set", "subject", "rolebinding/readers", "--user=alice"},
	} {
		k := succeeded(t, kubectl(t, nsK, args...))
		p := succeeded(t, plugin(t, nsP, args...))
		same(t, strings.Join(args[:2], " "), k.out, p.out)
	}
	svc := &corev1.Service{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: nsP, Name: "web"}, svc); err != nil {
		t.Fatalf("get service web: %v", err)
	}
	rb := &rbacv1.RoleBinding{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: nsP, Name: "readers"}, rb); err != nil {
		t.Fatalf("get rolebinding readers: %v", err)
	}
	if svc.Spec.Selector["app"] != "web" || len(rb.Subjects) != 1 || rb.Subjects[0].Name != "alice" {
		t.Errorf("service selects %v and the binding names %+v, want app=web and the user alice", svc.Spec.Selector, rb.Subjects)
	}
}
