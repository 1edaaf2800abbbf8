package inplaceupdate

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
)

// Policy is which ways a workload's update strategy lets its pods reach the update revision.
type Policy int

const (
	// PolicyRecreate always recreates pods.
	PolicyRecreate Policy = iota
	// PolicyInPlaceIfPossible updates in place when the change allows it, else recreates.
	PolicyInPlaceIfPossible
	// PolicyInPlaceOnly updates in place when the change allows it, else leaves the pods alone.
	PolicyInPlaceOnly
)

// Route is how the pods of an old revision reach the update revision.
type Route int

const (
	// RouteRecreate deletes the pod so that a pod of the update revision replaces it.
	RouteRecreate Route = iota
	// RouteInPlace updates the pod in place.
	RouteInPlace
	// RouteStuck is an InPlaceOnly update of a change that cannot go in place: the pod is left
	// alone and the workload reports the failed update.
	RouteStuck
)

// Decision is how every pod of one revision reaches the update revision; Plan is set when the
// route is RouteInPlace.
type Decision struct {
	Route Route
	Plan  *Plan
}

// DecideRoute decides how pods at revision from reach revision update under policy: in place when
// the policy allows it and the change between the two templates can go in place; else by
// recreation, unless the policy is InPlaceOnly, which leaves them stuck. A nil from is a revision
// no longer in history, which cannot be compared, so its pods are recreated.
func DecideRoute(policy Policy, from, update *appsv1.ControllerRevision, opts Options) (Decision, error) {
	if policy == PolicyRecreate {
		return Decision{Route: RouteRecreate}, nil
	}
	if from != nil {
		plan, ok, err := PlanUpdate(from, update, SpecTemplate, opts)
		if err != nil {
			return Decision{}, fmt.Errorf("compare revision %s with %s: %w", from.Name, update.Name, err)
		}
		if ok {
			return Decision{Route: RouteInPlace, Plan: plan}, nil
		}
	}
	if policy == PolicyInPlaceOnly {
		return Decision{Route: RouteStuck}, nil
	}
	return Decision{Route: RouteRecreate}, nil
}

// Routes decides how pods reach the update revision once per revision they are at, however many
// pods are at it.
type Routes struct {
	// Decide decides for pods at revision from.
	Decide  func(from string) (Decision, error)
	decided map[string]Decision
}

// For returns the decision for pods at revision from, deciding it the first time.
func (r *Routes) For(from string) (Decision, error) {
	if d, ok := r.decided[from]; ok {
		return d, nil
	}
	d, err := r.Decide(from)
	if err != nil {
		return Decision{}, err
	}
	if r.decided == nil {
		r.decided = map[string]Decision{}
	}
	r.decided[from] = d
	return d, nil
}

// PolicyOf is the policy of a workload whose strategy type is t, given the kind's values of a
// recreate-only type and an in-place-only type; any other type updates in place when it can.
func PolicyOf[T comparable](t, recreate, inPlaceOnly T) Policy {
	switch t {
	case recreate:
		return PolicyRecreate
	case inPlaceOnly:
		return PolicyInPlaceOnly
	}
	return PolicyInPlaceIfPossible
}
