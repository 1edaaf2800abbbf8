package webhooktest

import (
	"context"
	"fmt"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Then is what a fuzz target checks of a well-formed answer beyond Check: nil accepts it.
type Then func(ctx context.Context, h admission.Handler, req admission.Request, resp admission.Response) error

// Idempotent is the Then of a defaulting handler: its patches settle after one round
// (CheckIdempotent).
func Idempotent(ctx context.Context, h admission.Handler, req admission.Request, resp admission.Response) error {
	return CheckIdempotent(ctx, h, req, resp)
}

// Stable is the Then of a validating handler: a second answer to the same request allows or
// refuses it with the same code.
func Stable(ctx context.Context, h admission.Handler, req admission.Request, first admission.Response) error {
	second, _ := Check(ctx, h, req)
	if first.Allowed != second.Allowed || first.Result.Code != second.Result.Code {
		return fmt.Errorf("two answers for one request: %v/%d then %v/%d", first.Allowed, first.Result.Code, second.Allowed, second.Result.Code)
	}
	return nil
}

// Input is one fuzz seed: the operation picked by Op (see Operations), the object and the stored
// object ("" for none).
type Input struct {
	Op       uint8
	Obj, Old string
}

// Seeds are a fuzz target's seeds: the sample files' documents (as SeedSamples adds them) and
// hand-written inputs.
type Seeds struct {
	Files   []string
	Deletes bool
	Inputs  []Input
}

// Add adds the seeds to f as (op, obj, old) inputs.
func (s Seeds) Add(f *testing.F) {
	SeedSamples(f, s.Deletes, s.Files...)
	for _, in := range s.Inputs {
		var old []byte
		if in.Old != "" {
			old = []byte(in.Old)
		}
		f.Add(in.Op, []byte(in.Obj), old)
	}
}

// SeedSamples adds every document of the sample files to f as (op, obj, old) inputs: a create,
// an update to itself and, with deletes, a deletion.
func SeedSamples(f *testing.F, deletes bool, files ...string) {
	samples, err := Samples(files...)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range samples {
		f.Add(uint8(0), s, []byte(nil))
		f.Add(uint8(1), s, s)
		if deletes {
			f.Add(uint8(2), []byte(nil), s)
		}
	}
}

// Fuzz feeds f's (op, obj, old) inputs to h in namespace "ns", the operation picked from
// Operations by op: every request the server could hand h must get an answer that passes Check
// and then (unless nil).
func Fuzz(f *testing.F, h admission.Handler, then Then) {
	f.Fuzz(func(t *testing.T, op uint8, obj, old []byte) {
		answer(t, h, Request(Operations[int(op)%len(Operations)], "ns", obj, old), then)
	})
}

// FuzzObject is Fuzz for (op, obj) inputs, which name no stored object.
func FuzzObject(f *testing.F, h admission.Handler, then Then) {
	f.Fuzz(func(t *testing.T, op uint8, obj []byte) {
		answer(t, h, Request(Operations[int(op)%len(Operations)], "ns", obj, nil), then)
	})
}

// answer runs h on req when it is Reachable and fails t unless the answer passes Check and
// then.
func answer(t *testing.T, h admission.Handler, req admission.Request, then Then) {
	if !Reachable(req) {
		return
	}
	ctx := context.Background()
	resp, err := Check(ctx, h, req)
	if err != nil {
		t.Fatal(err)
	}
	if then == nil {
		return
	}
	if err := then(ctx, h, req, resp); err != nil {
		t.Fatal(err)
	}
}
