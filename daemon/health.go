package daemon

import (
	"context"
	"fmt"
	"net/http"
	"time"

	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/daemon/cri"
)

// healthCheckTimeout bounds one probe's questions to the runtime.
const healthCheckTimeout = 3 * time.Second

// healthHandler answers 200 "ok" when check passes, else 503 with check's error.
func healthHandler(check func(context.Context) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), healthCheckTimeout)
		defer cancel()
		if err := check(ctx); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
}

// runtimeAnswers reports whether the CRI runtime answers Version.
func runtimeAnswers(ctx context.Context, rt *cri.Runtime) error {
	if _, err := rt.Containers.Version(ctx, &criv1.VersionRequest{}); err != nil {
		return fmt.Errorf("runtime not answering: %w", err)
	}
	return nil
}

// watchCached registers the informer of each kind before the cache starts, so that the cache
// lists them all at start-up and readiness waits for every one.
func watchCached(ctx context.Context, c cache.Cache, kinds []client.Object) error {
	for _, o := range kinds {
		if _, err := c.GetInformer(ctx, o, cache.BlockUntilSynced(false)); err != nil {
			return fmt.Errorf("watch %T: %w", o, err)
		}
	}
	return nil
}

// cacheSynced reports the first kind whose informer has not listed its objects yet.
func cacheSynced(ctx context.Context, c cache.Cache, kinds []client.Object) error {
	for _, o := range kinds {
		inf, err := c.GetInformer(ctx, o, cache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Errorf("cache of %T: %w", o, err)
		}
		if !inf.HasSynced() {
			return fmt.Errorf("cache of %T not synced yet", o)
		}
	}
	return nil
}
