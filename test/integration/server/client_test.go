package server

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/kruise-addon/kruise-addon/installer/server/client"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// generated is the client a console team generates from openapi.yaml, over the api's
// validating transport, calling as the operator.
func (c *api) generated(t *testing.T) *client.ClientWithResponses {
	t.Helper()
	gc, err := client.NewClientWithResponses(c.base, client.WithHTTPClient(c.client),
		client.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+operatorToken)
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	return gc
}

// follow polls an operation's events through the generated client, as it sends no Accept,
// until the operation ends, and fails the test unless it succeeded.
func follow(t *testing.T, gc *client.ClientWithResponses, what string, accepted *client.Operation) {
	t.Helper()
	if accepted == nil {
		t.Fatalf("%s: no operation in the answer", what)
	}
	var last []client.Event
	framework.Eventually(t, installTimeout, what+" ends", func(ctx context.Context) error {
		res, err := gc.GetOperationEventsWithResponse(ctx, accepted.Id, nil)
		if err != nil {
			return err
		}
		if res.JSON200 == nil {
			return fmt.Errorf("events: %s: %s", res.Status(), res.Body)
		}
		last = res.JSON200.Events
		if res.JSON200.Operation.State == client.OperationStateRunning {
			return fmt.Errorf("still running after %d events", len(last))
		}
		return nil
	})
	if n := len(last); n == 0 || last[n-1].Type != client.EventTypeDone || last[n-1].State == nil || *last[n-1].State != client.EventStateSucceeded {
		t.Fatalf("%s did not succeed: %+v", what, last)
	}
}

// A console that generated its client from openapi.yaml drives install, events, status,
// upgrade and uninstall through it against the real apiserver; the validating transport checks
// every answer against the document too.
func TestAGeneratedClientDrivesInstallEventsStatusUpgradeUninstall(t *testing.T) {
	c, _ := startServer(t)
	gc := c.generated(t)
	ctx := context.Background()
	ns := "kruise-generated"
	values := testValues(nil)

	install, err := gc.InstallWithResponse(ctx, "test", nil, client.ApplyRequest{Namespace: &ns, Values: &values})
	if err != nil {
		t.Fatal(err)
	}
	if install.JSON202 == nil {
		t.Fatalf("install: %s", answer(install.Status(), install.Body))
	}
	follow(t, gc, "install", &install.JSON202.Operation)

	addon, err := gc.GetAddonWithResponse(ctx, "test", &client.GetAddonParams{Namespace: &ns})
	if err != nil {
		t.Fatal(err)
	}
	if addon.JSON200 == nil || addon.JSON200.Status.State != client.AddonStatusStateDeployed {
		t.Fatalf("status after install, want deployed: %s", answer(addon.Status(), addon.Body))
	}

	upgrade, err := gc.UpgradeWithResponse(ctx, "test", nil, client.ApplyRequest{Namespace: &ns, Values: &values})
	if err != nil {
		t.Fatal(err)
	}
	if upgrade.JSON202 == nil {
		t.Fatalf("upgrade: %s", answer(upgrade.Status(), upgrade.Body))
	}
	follow(t, gc, "upgrade", &upgrade.JSON202.Operation)
	op, err := gc.GetOperationWithResponse(ctx, upgrade.JSON202.Operation.Id)
	if err != nil {
		t.Fatal(err)
	}
	if op.JSON200 == nil || op.JSON200.Result == nil || op.JSON200.Result.Revision != 2 {
		t.Fatalf("upgrade's operation, want revision 2: %s", answer(op.Status(), op.Body))
	}

	uninstall, err := gc.UninstallWithResponse(ctx, "test", nil, client.UninstallRequest{Namespace: &ns})
	if err != nil {
		t.Fatal(err)
	}
	if uninstall.JSON202 == nil {
		t.Fatalf("uninstall: %s", answer(uninstall.Status(), uninstall.Body))
	}
	follow(t, gc, "uninstall", &uninstall.JSON202.Operation)
	if addon, err = gc.GetAddonWithResponse(ctx, "test", &client.GetAddonParams{Namespace: &ns}); err != nil {
		t.Fatal(err)
	}
	if addon.JSON200 == nil || addon.JSON200.Status.State != client.AddonStatusStateAbsent || !addon.JSON200.Healthy {
		t.Fatalf("status after uninstall, want absent and healthy: %s", answer(addon.Status(), addon.Body))
	}
}

// answer is a generated response's status and body, for a failure message.
func answer(status string, body []byte) string { return status + ": " + string(body) }
