package harness

import "testing"

func TestControllersPicksTheManagersOwnByName(t *testing.T) {
	got := Controllers("podreadiness", "cloneset")
	if len(got) != 2 || got[0].Name != "podreadiness" || got[1].Name != "cloneset" {
		t.Fatalf("components %+v, want podreadiness then cloneset", got)
	}
	for _, c := range got {
		if c.Setup == nil || c.Gates != nil || c.Workers != 0 {
			t.Errorf("component %s: want its setup without gates or default workers, got %+v", c.Name, c)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("an unknown controller name did not panic")
		}
	}()
	Controllers("no-such-controller")
}
