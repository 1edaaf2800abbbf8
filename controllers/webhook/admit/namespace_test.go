package admit

import "testing"

func TestValidateNamespace(t *testing.T) {
	tests := []struct {
		name              string
		requested, object string
		wantErr           string
	}{
		{name: "an object in the request's namespace passes", requested: "ns", object: "ns"},
		{name: "an object that names no namespace takes the request's", requested: "ns"},
		{name: "a request without a namespace is refused", object: "ns", wantErr: "metadata.namespace: Required value: the admission request must name the object's namespace"},
		{name: "an object naming another namespace is refused", requested: "ns", object: "other", wantErr: `metadata.namespace: Invalid value: "other": must be the namespace of the admission request, "ns"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ValidateNamespace(tt.requested, tt.object).ToAggregate()
			switch {
			case tt.wantErr == "" && got != nil:
				t.Fatalf("want no error, got %v", got)
			case tt.wantErr != "" && (got == nil || got.Error() != tt.wantErr):
				t.Fatalf("want %q, got %v", tt.wantErr, got)
			}
		})
	}
}
