package workloadref

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ConfigMapName is the add-on's configuration ConfigMap, in the manager's namespace.
const ConfigMapName = "kruise-configuration"

// WorkloadSpreadWhitelistKey holds, as JSON, the custom workloads a WorkloadSpread may target.
const WorkloadSpreadWhitelistKey = "WorkloadSpread_Watch_Custom_Workload_WhiteList"

// PersistentPodStateWhitelistKey holds, as JSON, the custom StatefulSet-like workloads a
// PersistentPodState may target besides the StatefulSets: {"workloads":[{"Group","Version","Kind"}]}.
const PersistentPodStateWhitelistKey = "PPS_Watch_Custom_Workload_WhiteList"

// CustomWorkload is one whitelisted custom workload kind. Its group, version and kind are read
// from the JSON keys Group, Version and Kind, matched without regard to case.
type CustomWorkload struct {
	schema.GroupVersionKind
	// SubResources are the kinds the workload creates its pods through (a custom workload
	// running ReplicaSets, say); a pod of one of them belongs to the workload controlling it.
	SubResources []schema.GroupVersionKind `json:"subResources,omitempty"`
	// ReplicasPath is the dotted path of the workload's desired replicas, e.g. spec.replicas.
	ReplicasPath string `json:"replicasPath,omitempty"`
}

// Whitelist is the custom workloads a WorkloadSpread or a PersistentPodState may target.
type Whitelist struct {
	Workloads []CustomWorkload `json:"workloads,omitempty"`
}

// Lookup returns the whitelisted workload of kind k, or nil. A nil Whitelist holds none.
func (w *Whitelist) Lookup(k schema.GroupKind) *CustomWorkload {
	if w == nil {
		return nil
	}
	for i := range w.Workloads {
		if c := &w.Workloads[i]; c.Group == k.Group && c.Kind == k.Kind {
			return c
		}
	}
	return nil
}

// Kinds is the whitelisted workloads' kinds and those of their sub-resources.
func (w *Whitelist) Kinds() Kinds {
	s := Kinds{}
	if w == nil {
		return s
	}
	for _, c := range w.Workloads {
		s[schema.GroupKind{Group: c.Group, Kind: c.Kind}] = true
		for _, sub := range c.SubResources {
			s[schema.GroupKind{Group: sub.Group, Kind: sub.Kind}] = true
		}
	}
	return s
}

// Config reads the kruise-configuration ConfigMap by name, so that no ConfigMap is listed or
// cached cluster-wide.
type Config struct {
	// Reader reads the ConfigMap, normally the apiserver; nil reads an empty configuration.
	Reader client.Reader
	// Namespace is the manager's namespace.
	Namespace string
}

// WorkloadSpreadWhitelist returns the custom workloads a WorkloadSpread may target: none when
// the ConfigMap or its key is absent. A value that is not the whitelist's JSON is an error that
// names the key.
func (c Config) WorkloadSpreadWhitelist(ctx context.Context) (*Whitelist, error) {
	return c.whitelist(ctx, WorkloadSpreadWhitelistKey, `{"workloads":[{"group","version","kind","replicasPath"}]}`)
}

// PersistentPodStateWhitelist returns the custom StatefulSet-like workloads a
// PersistentPodState may target: none when the ConfigMap or its key is absent. As in 1.8 their
// replicas are read at spec.replicas and their pods are numbered as a StatefulSet's, from 0.
func (c Config) PersistentPodStateWhitelist(ctx context.Context) (*Whitelist, error) {
	w, err := c.whitelist(ctx, PersistentPodStateWhitelistKey, `{"workloads":[{"group","version","kind"}]}`)
	if err != nil {
		return nil, err
	}
	for i := range w.Workloads {
		w.Workloads[i].ReplicasPath = "spec.replicas"
	}
	return w, nil
}

// whitelist reads the whitelist at key; shape is the JSON an error shows as wanted.
func (c Config) whitelist(ctx context.Context, key, shape string) (*Whitelist, error) {
	w := &Whitelist{}
	if c.Reader == nil {
		return w, nil
	}
	cm := &corev1.ConfigMap{}
	if err := c.Reader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: ConfigMapName}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return w, nil
		}
		return nil, fmt.Errorf("get ConfigMap %s/%s: %w", c.Namespace, ConfigMapName, err)
	}
	raw, ok := cm.Data[key]
	if !ok || raw == "" {
		return w, nil
	}
	if err := json.Unmarshal([]byte(raw), w); err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s key %s: want %s: %w", c.Namespace, ConfigMapName, key, shape, err)
	}
	return w, nil
}

// WorkloadSpreadWhitelistOnce returns a function that reads the whitelist on its first call
// and answers the later ones with what it read: one read serves one admission or one pass.
func (c Config) WorkloadSpreadWhitelistOnce() func(ctx context.Context) (*Whitelist, error) {
	var (
		w    *Whitelist
		err  error
		done bool
	)
	return func(ctx context.Context) (*Whitelist, error) {
		if !done {
			w, err = c.WorkloadSpreadWhitelist(ctx)
			done = true
		}
		return w, err
	}
}
