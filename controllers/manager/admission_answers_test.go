package manager

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/configuration"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

var updateAnswers = flag.Bool("update-answers", false, "rewrite testdata/admission-answers.json from the handlers' answers")

const answersFile = "testdata/admission-answers.json"

// answerGates are the gate settings the kinds' webhooks are asked under. The pod webhooks are
// off in all of them: they are not kind webhooks, and their steps need a running manager.
var answerGates = map[string]string{
	"defaults": "PodWebhook=false",
	"alpha on": "PodWebhook=false,ResourcesDeletionProtection=true,ImagePullJobGate=true,TemplateNoDefaults=true," +
		"CloneSetShortHash=true,SidecarSetPatchPodMetadataDefaultsAllowed=true,PodUnavailableBudgetUpdateGate=true,ResourceDistributionGate=true",
	"daemon and budgets off": "PodWebhook=false,KruiseDaemon=false,PodProbeMarkerGate=false," +
		"PodUnavailableBudgetDeleteGate=false,PodUnavailableBudgetUpdateGate=false",
}

// answer is what a handler said, as the apiserver passes it on.
type answer struct {
	Allowed bool     `json:"allowed"`
	Code    int32    `json:"code"`
	Message string   `json:"message,omitempty"`
	Patches []string `json:"patches,omitempty"`
}

// TestKindWebhooksAnswerAsRecorded: every kind's webhook answers each request the apiserver may
// send it (the operations of its rules, on the sample objects, an emptied spec, a body that
// does not decode, an object being deleted, a protected deletion) with the code, message and
// patches recorded in testdata/admission-answers.json, under the default gates and two other
// settings. The refusals' wording is what users see. Run with -update-answers to record a
// deliberate change.
func TestKindWebhooksAnswerAsRecorded(t *testing.T) {
	got := map[string]map[string]answer{}
	for setting, gateString := range answerGates {
		gates := features.NewGate()
		if err := gates.Set(gateString); err != nil {
			t.Fatal(err)
		}
		mgr := webhooktest.Manager(samplePod())
		d := setup.Deps{Gates: gates, ManagerNamespace: "kruise-system", Workers: func(string) int { return 1 },
			Clock: clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}
		handlers := map[string]admission.Handler{}
		for _, set := range WebhookSets() {
			for path, h := range set(mgr, d) {
				handlers[path] = h
			}
		}
		table := configuration.Webhooks()
		for _, w := range append(append([]configuration.Webhook{}, table.Mutating...), table.Validating...) {
			if w.PodWebhook || w.Protection {
				continue
			}
			h, ok := handlers[w.Path]
			if !ok {
				t.Fatalf("no handler serves %s", w.Path)
			}
			for _, rule := range w.Rules {
				cluster := rule.Resources[0] == "sidecarsets" || rule.Resources[0] == "nodeimages"
				for _, op := range rule.Operations {
					for name, req := range answerRequests(t, rule.Resources[0], admissionv1.Operation(op), cluster) {
						key := fmt.Sprintf("%s %s %s", w.Path, op, name)
						if got[key] == nil {
							got[key] = map[string]answer{}
						}
						got[key][setting] = answerOf(t, h.Handle(context.Background(), req))
					}
				}
			}
		}
	}
	for _, bySetting := range got {
		collapse(bySetting)
	}
	if *updateAnswers {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(answersFile, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(answersFile)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]answer{}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	testkit.Diff(t, "answers, recorded (want) against now (got)", want, got)
}

// everySetting keys the one answer a request gets under every gate setting.
const everySetting = "*"

// collapse keeps one answer under everySetting when all settings got the same.
func collapse(bySetting map[string]answer) {
	var first *answer
	for _, a := range bySetting {
		if first == nil {
			first = &a
		} else if !cmp.Equal(*first, a) {
			return
		}
	}
	clear(bySetting)
	bySetting[everySetting] = *first
}

// answerRequests are the requests op of resource is asked with, by a sentence.
func answerRequests(t *testing.T, resource string, op admissionv1.Operation, cluster bool) map[string]admission.Request {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "test", "integration", "testdata", "samples", resource+"*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples of %s: %v", resource, err)
	}
	for i, f := range files {
		files[i] = filepath.Base(f)
	}
	raws, err := webhooktest.Samples(files...)
	if err != nil {
		t.Fatal(err)
	}
	ns := "ns"
	if cluster {
		ns = ""
	}
	// edited is raw in the request's namespace, as stored (a uid, a resourceVersion), and then
	// changed by edit.
	edited := func(raw []byte, edit func(obj, meta map[string]any)) []byte {
		obj := map[string]any{}
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		meta := obj["metadata"].(map[string]any)
		meta["uid"], meta["resourceVersion"] = "sample-uid", "1"
		if ns != "" {
			meta["namespace"] = ns
		}
		edit(obj, meta)
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var samples [][]byte
	for _, raw := range raws {
		samples = append(samples, edited(raw, func(_, _ map[string]any) {}))
	}
	first := samples[0]
	emptied := edited(first, func(obj, _ map[string]any) { obj["spec"] = map[string]any{} })
	undecodable := edited(first, func(obj, _ map[string]any) { obj["spec"] = "not an object" })
	// An object being deleted loses its last finalizer.
	held := edited(first, func(_, meta map[string]any) {
		meta["finalizers"] = []any{"example.com/hold"}
		meta["deletionTimestamp"] = "2026-01-02T03:04:05Z"
	})
	released := edited(first, func(_, meta map[string]any) { meta["deletionTimestamp"] = "2026-01-02T03:04:05Z" })
	relabelled := edited(first, func(_, meta map[string]any) { meta["labels"] = map[string]any{"changed": "yes"} })
	protected := func(how string) []byte {
		return edited(first, func(_, meta map[string]any) {
			meta["labels"] = map[string]any{configuration.ProtectionLabel: how}
		})
	}
	req := func(obj, old []byte) admission.Request { return webhooktest.Request(op, ns, obj, old) }
	out := map[string]admission.Request{}
	switch op {
	case admissionv1.Create:
		for i, s := range samples {
			out[fmt.Sprintf("sample %d", i)] = req(s, nil)
		}
		out["an emptied spec"] = req(emptied, nil)
		out["a body that does not decode"] = req(undecodable, nil)
	case admissionv1.Update:
		out["the sample unchanged"] = req(first, first)
		out["the sample relabelled"] = req(relabelled, first)
		out["the sample being deleted losing its finalizer"] = req(released, held)
		out["the spec emptied"] = req(emptied, first)
		out["a body that does not decode"] = req(undecodable, first)
	case admissionv1.Delete:
		out["without the old object"] = req(nil, nil)
		out["the sample"] = req(nil, first)
		out["the sample protected Always"] = req(nil, protected("Always"))
		out["the sample protected Cascading"] = req(nil, protected("Cascading"))
	}
	return out
}

func answerOf(t *testing.T, resp admission.Response) answer {
	t.Helper()
	a := answer{Allowed: resp.Allowed}
	if resp.Result != nil {
		a.Code, a.Message = resp.Result.Code, resp.Result.Message
	}
	for _, p := range resp.Patches {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		a.Patches = append(a.Patches, string(b))
	}
	sort.Strings(a.Patches)
	a.Message = strings.TrimSpace(a.Message)
	return a
}

// samplePod is the pod the ContainerRecreateRequest sample names.
func samplePod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-7d9f8c6b5-x2k4q", Namespace: "ns", UID: "pod-uid"},
		Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{
			{Name: "app", Image: "app:1"}, {Name: "log-agent", Image: "agent:1"},
		}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "app", ContainerID: "containerd://app", Ready: true, Started: ptr.To(true)},
			{Name: "log-agent", ContainerID: "containerd://agent", Ready: true, Started: ptr.To(true)},
		}},
	}
}
