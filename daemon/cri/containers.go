package cri

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
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

// envExecTimeout bounds the `env` exec used when the runtime does not show a container's spec.
const envExecTimeout = 3 * time.Second

// ContainerEnv returns the environment the container with bare ID id was started with. It reads
// the OCI runtime spec from the runtime's verbose container status (containerd and CRI-O show
// it), so the image needs no shell; otherwise it runs `env` in the container.
func ContainerEnv(ctx context.Context, r *Runtime, id string) (map[string]string, error) {
	st, err := r.Containers.ContainerStatus(ctx, &criv1.ContainerStatusRequest{ContainerId: id, Verbose: true})
	if err != nil {
		return nil, fmt.Errorf("status of container %s: %w", id, err)
	}
	if env, ok := specEnv(st.GetInfo()); ok {
		return env, nil
	}
	resp, err := r.Containers.ExecSync(ctx, &criv1.ExecSyncRequest{ContainerId: id, Cmd: []string{"env"}, Timeout: int64(envExecTimeout / time.Second)})
	if err != nil {
		return nil, fmt.Errorf("exec env in container %s: %w", id, err)
	}
	if resp.GetExitCode() != 0 {
		return nil, fmt.Errorf("exec env in container %s exited %d: %s", id, resp.GetExitCode(), resp.GetStderr())
	}
	return parseEnv(strings.Split(strings.TrimSpace(string(resp.GetStdout())), "\n")), nil
}

// specEnv reads process.env of the OCI runtime spec in a verbose status's "info" entry.
func specEnv(info map[string]string) (map[string]string, bool) {
	raw, ok := info["info"]
	if !ok {
		return nil, false
	}
	var v struct {
		RuntimeSpec *struct {
			Process *struct {
				Env []string `json:"env"`
			} `json:"process"`
		} `json:"runtimeSpec"`
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil || v.RuntimeSpec == nil || v.RuntimeSpec.Process == nil {
		return nil, false
	}
	return parseEnv(v.RuntimeSpec.Process.Env), true
}

// parseEnv turns KEY=value lines into a map; of duplicate keys the first wins, as getenv finds it.
func parseEnv(lines []string) map[string]string {
	out := make(map[string]string, len(lines))
	for _, l := range lines {
		k, v, ok := strings.Cut(l, "=")
		if _, seen := out[k]; ok && k != "" && !seen {
			out[k] = v
		}
	}
	return out
}
