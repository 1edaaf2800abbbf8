package cri

import (
	"context"
	"fmt"
	"strconv"
	"time"

	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Labels and annotations the kubelet puts on the containers it creates.
const (
	LabelPodUID          = "io.kubernetes.pod.uid"
	LabelPodName         = "io.kubernetes.pod.name"
	LabelPodNamespace    = "io.kubernetes.pod.namespace"
	LabelContainerName   = "io.kubernetes.container.name"
	AnnotationHash       = "io.kubernetes.container.hash"
	AnnotationRestartCnt = "io.kubernetes.container.restartCount"
)

// Container is the newest runtime container of one pod-spec container.
type Container struct {
	Name string
	// ID is the bare runtime ID; FullID is <prefix>://<id> as in pod status.
	ID, FullID   string
	Attempt      uint32
	RestartCount int32
	State        criv1.ContainerState
	CreatedAt    time.Time
	StartedAt    time.Time
	// Hash is the kubelet's container hash annotation (hex), 0 when absent.
	Hash uint64
}

// Running reports whether the container is running.
func (c *Container) Running() bool { return c.State == criv1.ContainerState_CONTAINER_RUNNING }

// PodContainers returns, per container name, the newest container the runtime holds for podUID.
func PodContainers(ctx context.Context, r *Runtime, podUID string) (map[string]*Container, error) {
	resp, err := r.Containers.ListContainers(ctx, &criv1.ListContainersRequest{
		Filter: &criv1.ContainerFilter{LabelSelector: map[string]string{LabelPodUID: podUID}},
	})
	if err != nil {
		return nil, fmt.Errorf("list containers of pod %s: %w", podUID, err)
	}
	out := map[string]*Container{}
	for _, c := range resp.GetContainers() {
		name := c.GetLabels()[LabelContainerName]
		if name == "" {
			name = c.GetMetadata().GetName()
		}
		cur := &Container{
			Name:      name,
			ID:        c.GetId(),
			FullID:    r.IDPrefix() + "://" + c.GetId(),
			Attempt:   c.GetMetadata().GetAttempt(),
			State:     c.GetState(),
			CreatedAt: time.Unix(0, c.GetCreatedAt()),
		}
		cur.RestartCount = int32(cur.Attempt)
		if v, err := strconv.ParseInt(c.GetAnnotations()[AnnotationRestartCnt], 10, 32); err == nil {
			cur.RestartCount = int32(v)
		}
		if v, err := strconv.ParseUint(c.GetAnnotations()[AnnotationHash], 16, 64); err == nil {
			cur.Hash = v
		}
		if prev, ok := out[name]; ok && (prev.Attempt > cur.Attempt || (prev.Attempt == cur.Attempt && prev.CreatedAt.After(cur.CreatedAt))) {
			continue
		}
		out[name] = cur
	}
	for _, c := range out {
		st, err := r.Containers.ContainerStatus(ctx, &criv1.ContainerStatusRequest{ContainerId: c.ID})
		if err != nil {
			return nil, fmt.Errorf("status of container %s: %w", c.ID, err)
		}
		if s := st.GetStatus(); s != nil {
			c.State = s.GetState()
			if s.GetStartedAt() > 0 {
				c.StartedAt = time.Unix(0, s.GetStartedAt())
			}
		}
	}
	return out, nil
}
