package manager

import (
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
)

// leaderIdentity is who this process is in the Lease. In a pod it is the pod's name (env
// POD_NAME, from the downward API): a pod's name is never reused while the pod lives, and a
// container the kubelet restarts after a crash is the only other process with it — so the
// restarted manager renews the Lease its crashed process held as soon as its caches are warm,
// instead of every replica waiting out the lease duration. Outside a pod it is the host name
// plus a random suffix, unique per process.
func (o *Options) leaderIdentity() (string, error) {
	if o.PodName != "" {
		return o.PodName, nil
	}
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("leader-election identity: %w", err)
	}
	return host + "_" + string(uuid.NewUUID()), nil
}

// leaderLock is the Lease the replicas elect their leader through, held under leaderIdentity.
// Its client gives up on a request after half the renew deadline (at least a second), so one
// hung request cannot use up the whole deadline. It returns the broadcaster of the Lease's
// events ("… became leader"), to shut down when the manager ends.
func (o *Options) leaderLock(cfg *rest.Config, scheme *runtime.Scheme) (resourcelock.Interface, record.EventBroadcaster, error) {
	id, err := o.leaderIdentity()
	if err != nil {
		return nil, nil, err
	}
	cfg = rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	cfg.Timeout = max(o.RenewDeadline/2, time.Second)
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("leader-election client: %w", err)
	}
	coordination, err := coordinationv1client.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("leader-election client: %w", err)
	}
	events := record.NewBroadcaster()
	events.StartRecordingToSink(&corev1client.EventSinkImpl{Interface: core.Events("")})
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, o.leaderElectionNamespace(), LeaseName, core, coordination,
		resourcelock.ResourceLockConfig{Identity: id, EventRecorder: events.NewRecorder(scheme, corev1.EventSource{Component: id})})
	if err != nil {
		events.Shutdown()
		return nil, nil, fmt.Errorf("leader-election lock: %w", err)
	}
	return lock, events, nil
}
