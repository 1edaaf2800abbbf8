package ownedpods

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WriteStatus writes workload's status, as the reconcile epilogue of a workload controller
// whose For() watch sees every change of the workload. A conflict is not an error: the cache has
// not yet seen a newer workload (most often the controller's own last status write), and that
// newer object's event queues the workload again, whose reconcile writes the status from it.
func WriteStatus(ctx context.Context, c client.Client, workload client.Object) error {
	err := c.Status().Update(ctx, workload)
	switch {
	case err == nil:
		return nil
	case apierrors.IsConflict(err):
		ctrl.LoggerFrom(ctx).V(4).Info("Status write lost to a newer object; it is written again when the cache has it")
		return nil
	default:
		return fmt.Errorf("update status: %w", err)
	}
}
