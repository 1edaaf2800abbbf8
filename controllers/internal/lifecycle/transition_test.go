package lifecycle

import (
	"fmt"
	"testing"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// holdingHook is a hook that holds a pod for one intent, in the words the sentences of TestNext
// use for it: every behaviour of a holding hook is a row for each of the two.
type holdingHook struct {
	intent Intent
	// held and otherHeld are the pod's hold by this hook and by the other one.
	held, otherHeld func(*Pod) *bool
	waiting         appspub.LifecycleStateType
	// act, hook, aHook, holder, done and other are the words of the sentences.
	act, hook, aHook, holder, done, other string
}

var holdingHooks = []holdingHook{{
	intent: IntentDelete, waiting: appspub.LifecycleStatePreparingDelete,
	held:      func(p *Pod) *bool { return &p.PreDeleteHeld },
	otherHeld: func(p *Pod) *bool { return &p.InPlaceHeld },
	act:       "a deletion", hook: "preDelete", aHook: "a preDelete hook", holder: "the preDelete hook", done: "deleted", other: "inPlaceUpdate",
}, {
	intent: IntentUpdateInPlace, waiting: appspub.LifecycleStatePreparingUpdate,
	held:      func(p *Pod) *bool { return &p.InPlaceHeld },
	otherHeld: func(p *Pod) *bool { return &p.PreDeleteHeld },
	act:       "an in-place update", hook: "inPlaceUpdate", aHook: "an inPlaceUpdate hook", holder: "the hook", done: "updated", other: "preDelete",
}}

// pod is a pod in state with the holds set.
func pod(state appspub.LifecycleStateType, holds ...func(*Pod) *bool) Pod {
	p := Pod{State: state}
	for _, h := range holds {
		*h(&p) = true
	}
	return p
}

func TestNext(t *testing.T) {
	type tcase struct {
		pod    Pod
		intent Intent
		want   Step
	}
	normal := appspub.LifecycleStateNormal
	tests := map[string]tcase{}
	for _, h := range holdingHooks {
		tests[fmt.Sprintf("%s without %s proceeds", h.act, h.aHook)] = tcase{pod: pod(normal), intent: h.intent, want: Step{Proceed: true}}
		tests[fmt.Sprintf("%s %s holds moves the pod to %s", h.act, h.holder, h.waiting)] = tcase{pod: pod(normal, h.held), intent: h.intent, want: Step{Move: h.waiting}}
		tests[fmt.Sprintf("a pod in %s waits while the %s hook holds it", h.waiting, h.hook)] = tcase{pod: pod(h.waiting, h.held), intent: h.intent, want: Step{}}
		tests[fmt.Sprintf("a pod in %s is %s once the hook lets go", h.waiting, h.done)] = tcase{pod: pod(h.waiting), intent: h.intent, want: Step{Proceed: true}}
		tests[fmt.Sprintf("the %s hook does not hold %s", h.other, h.act)] = tcase{pod: pod(normal, h.otherHeld), intent: h.intent, want: Step{Proceed: true}}
	}
	// The rows that are not one hook's.
	for name, tc := range map[string]tcase{
		"a pod in PreparingUpdate that is deleted instead goes through preDelete": {
			pod: Pod{State: appspub.LifecycleStatePreparingUpdate, InPlaceHeld: true, PreDeleteHeld: true}, intent: IntentDelete, want: Step{Move: appspub.LifecycleStatePreparingDelete},
		},
		"PreparingNormal waits for every preNormal handler": {
			pod: Pod{State: appspub.LifecycleStatePreparingNormal}, want: Step{},
		},
		"PreparingNormal goes to Normal once every preNormal handler is there": {
			pod: Pod{State: appspub.LifecycleStatePreparingNormal, PreNormalDone: true}, want: Step{Move: appspub.LifecycleStateNormal},
		},
		"Updating stays while the pod is not at the update revision": {
			pod: Pod{State: appspub.LifecycleStateUpdating, InPlaceDone: true}, want: Step{},
		},
		"Updating goes to Updated at the update revision": {
			pod: Pod{State: appspub.LifecycleStateUpdating, AtUpdateRevision: true}, want: Step{Move: appspub.LifecycleStateUpdated},
		},
		"Updated waits for every inPlaceUpdate handler": {
			pod: Pod{State: appspub.LifecycleStateUpdated, AtUpdateRevision: true}, want: Step{},
		},
		"Updated goes to Normal once every inPlaceUpdate handler is back": {
			pod: Pod{State: appspub.LifecycleStateUpdated, AtUpdateRevision: true, InPlaceDone: true}, want: Step{Move: appspub.LifecycleStateNormal},
		},
		"a Normal pod without an intent stays": {
			pod: Pod{State: appspub.LifecycleStateNormal, PreNormalDone: true, InPlaceDone: true, AtUpdateRevision: true}, want: Step{},
		},
		"a pod held in PreparingDelete without an intent stays": {
			pod: Pod{State: appspub.LifecycleStatePreparingDelete, PreDeleteHeld: true}, want: Step{},
		},
	} {
		tests[name] = tc
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		if got := Next(tc.pod, tc.intent); got != tc.want {
			t.Fatalf("Next(%+v, %v) = %+v, want %+v", tc.pod, tc.intent, got, tc.want)
		}
	})
}
