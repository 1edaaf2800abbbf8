package lifecycle

import (
	"testing"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestNext(t *testing.T) {
	const (
		normal          = appspub.LifecycleStateNormal
		preparingNormal = appspub.LifecycleStatePreparingNormal
		preparingDelete = appspub.LifecycleStatePreparingDelete
		preparingUpdate = appspub.LifecycleStatePreparingUpdate
		updating        = appspub.LifecycleStateUpdating
		updated         = appspub.LifecycleStateUpdated
	)
	type tcase struct {
		pod    Pod
		intent Intent
		want   Step
	}
	tests := map[string]tcase{
		"a deletion without a preDelete hook proceeds": {
			pod: Pod{State: normal}, intent: IntentDelete, want: Step{Proceed: true},
		},
		"a deletion the preDelete hook holds moves the pod to PreparingDelete": {
			pod: Pod{State: normal, PreDeleteHeld: true}, intent: IntentDelete, want: Step{Move: preparingDelete},
		},
		"a pod in PreparingDelete waits while the preDelete hook holds it": {
			pod: Pod{State: preparingDelete, PreDeleteHeld: true}, intent: IntentDelete, want: Step{},
		},
		"a pod in PreparingDelete is deleted once the hook lets go": {
			pod: Pod{State: preparingDelete}, intent: IntentDelete, want: Step{Proceed: true},
		},
		"the inPlaceUpdate hook does not hold a deletion": {
			pod: Pod{State: normal, InPlaceHeld: true}, intent: IntentDelete, want: Step{Proceed: true},
		},
		"a pod in PreparingUpdate that is deleted instead goes through preDelete": {
			pod: Pod{State: preparingUpdate, InPlaceHeld: true, PreDeleteHeld: true}, intent: IntentDelete, want: Step{Move: preparingDelete},
		},
		"an in-place update without an inPlaceUpdate hook proceeds": {
			pod: Pod{State: normal}, intent: IntentUpdateInPlace, want: Step{Proceed: true},
		},
		"an in-place update the hook holds moves the pod to PreparingUpdate": {
			pod: Pod{State: normal, InPlaceHeld: true}, intent: IntentUpdateInPlace, want: Step{Move: preparingUpdate},
		},
		"a pod in PreparingUpdate waits while the inPlaceUpdate hook holds it": {
			pod: Pod{State: preparingUpdate, InPlaceHeld: true}, intent: IntentUpdateInPlace, want: Step{},
		},
		"a pod in PreparingUpdate is updated once the hook lets go": {
			pod: Pod{State: preparingUpdate}, intent: IntentUpdateInPlace, want: Step{Proceed: true},
		},
		"the preDelete hook does not hold an in-place update": {
			pod: Pod{State: normal, PreDeleteHeld: true}, intent: IntentUpdateInPlace, want: Step{Proceed: true},
		},
		"PreparingNormal waits for every preNormal handler": {
			pod: Pod{State: preparingNormal}, want: Step{},
		},
		"PreparingNormal goes to Normal once every preNormal handler is there": {
			pod: Pod{State: preparingNormal, PreNormalDone: true}, want: Step{Move: normal},
		},
		"Updating stays while the pod is not at the update revision": {
			pod: Pod{State: updating, InPlaceDone: true}, want: Step{},
		},
		"Updating goes to Updated at the update revision": {
			pod: Pod{State: updating, AtUpdateRevision: true}, want: Step{Move: updated},
		},
		"Updated waits for every inPlaceUpdate handler": {
			pod: Pod{State: updated, AtUpdateRevision: true}, want: Step{},
		},
		"Updated goes to Normal once every inPlaceUpdate handler is back": {
			pod: Pod{State: updated, AtUpdateRevision: true, InPlaceDone: true}, want: Step{Move: normal},
		},
		"a Normal pod without an intent stays": {
			pod: Pod{State: normal, PreNormalDone: true, InPlaceDone: true, AtUpdateRevision: true}, want: Step{},
		},
		"a pod held in PreparingDelete without an intent stays": {
			pod: Pod{State: preparingDelete, PreDeleteHeld: true}, want: Step{},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		if got := Next(tc.pod, tc.intent); got != tc.want {
			t.Fatalf("Next(%+v, %v) = %+v, want %+v", tc.pod, tc.intent, got, tc.want)
		}
	})
}
