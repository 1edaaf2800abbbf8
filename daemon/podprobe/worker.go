package podprobe

import (
	"context"
	"fmt"
	"sync"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/klog/v2"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/daemon/cri"
)

// worker runs one probe of one pod every periodSeconds.
type worker struct {
	c      *Controller
	key    probeKey
	mu     sync.Mutex
	spec   *appsv1alpha1.ContainerProbeSpec
	stopCh chan struct{}
	once   sync.Once
	// restart asks the next probe to start the thresholds over (the handler changed).
	restart bool
	// The streak of equal raw results, for the thresholds; reset when the container changes.
	containerID string
	last        appsv1alpha1.ProbeState
	streak      int
}

func newWorker(c *Controller, k probeKey, spec *appsv1alpha1.ContainerProbeSpec) *worker {
	return &worker{c: c, key: k, spec: spec.DeepCopy(), stopCh: make(chan struct{})}
}

func (w *worker) stop() { w.once.Do(func() { close(w.stopCh) }) }

// setSpec takes a changed probe; a changed handler starts the thresholds over.
func (w *worker) setSpec(spec *appsv1alpha1.ContainerProbeSpec) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !apiequality.Semantic.DeepEqual(w.spec.ProbeHandler, spec.ProbeHandler) {
		w.restart = true
	}
	w.spec = spec.DeepCopy()
}

func (w *worker) period() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return time.Duration(max(w.spec.PeriodSeconds, 1)) * time.Second
}

// run probes until the worker is stopped or ctx ends.
func (w *worker) run(ctx context.Context) {
	for {
		w.probeOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-w.stopCh:
			return
		case <-w.c.opts.Clock.After(w.period()):
		}
	}
}

// probeOnce runs the probe once against the newest container of its name and records the
// result once the threshold for it is met. A container that is not running fails at once; a
// container started less than initialDelaySeconds (at least 1) ago is not probed yet.
func (w *worker) probeOnce(ctx context.Context) {
	w.mu.Lock()
	spec := w.spec.DeepCopy()
	if w.restart {
		w.restart, w.last, w.streak = false, "", 0
	}
	w.mu.Unlock()
	log := klog.FromContext(ctx)

	containers, err := cri.PodContainers(ctx, w.c.rt, w.key.uid)
	if err != nil {
		log.V(4).Info("Listing the pod's containers failed", "err", err)
		return
	}
	ctr := containers[w.key.container]
	if ctr == nil {
		log.V(4).Info("Container not found yet", "container", w.key.container)
		return
	}
	if ctr.ID != w.containerID {
		w.containerID, w.last, w.streak = ctr.ID, "", 0
	}
	if !ctr.Running() {
		w.c.record(w.key, appsv1alpha1.ProbeFailed, fmt.Sprintf("Container(%s) is not running", w.key.container))
		return
	}
	delay := time.Duration(max(spec.InitialDelaySeconds, 1)) * time.Second
	if w.c.opts.Clock.Since(ctr.StartedAt) < delay {
		return
	}
	state, msg := w.c.prober.Probe(ctx, spec, ctr.ID, w.key.ip)
	if state == w.last {
		w.streak++
	} else {
		w.last, w.streak = state, 1
	}
	threshold := spec.SuccessThreshold
	if state == appsv1alpha1.ProbeFailed {
		threshold = spec.FailureThreshold
	}
	if w.streak < int(max(threshold, 1)) {
		return
	}
	w.c.record(w.key, state, msg)
}
