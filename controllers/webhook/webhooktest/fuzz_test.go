package webhooktest

import (
	"context"
	"net/http"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// flip allows every other request and refuses the rest with 422.
type flip struct{ n int }

func (h *flip) Handle(context.Context, admission.Request) admission.Response {
	h.n++
	if h.n%2 == 0 {
		return admission.Allowed("")
	}
	return admission.Errored(http.StatusUnprocessableEntity, context.Canceled)
}

func TestStable(t *testing.T) {
	req := Request(admissionv1.Create, "ns", []byte(`{}`), nil)
	tests := []struct {
		name    string
		h       admission.Handler
		wantErr bool
	}{
		{name: "a handler that answers the same twice is stable", h: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
			return admission.Allowed("")
		})},
		{name: "a handler that refuses once and then allows is not", h: &flip{}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, err := Check(context.Background(), tt.h, req)
			if err != nil {
				t.Fatal(err)
			}
			if err := Stable(context.Background(), tt.h, req, first); (err != nil) != tt.wantErr {
				t.Fatalf("Stable() = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}
