package framework

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// NodeSimulator plays kube-scheduler and kubelet for fake nodes it creates: it binds pods to
// them and moves the pods bound to them through a kubelet's lifecycle. Pods on other nodes are
// never touched.
type NodeSimulator struct {
	cs         kubernetes.Interface
	httpClient *http.Client
	clock      clock.WithDelayedExecution
	timing     timing
	schedule   bool
	namespaces map[string]bool // nil: every namespace
	logger     logr.Logger

	factory    informers.SharedInformerFactory
	podIndex   cache.Indexer
	podLister  corelisters.PodLister
	nodeLister corelisters.NodeLister

	kubeletQueue   workqueue.TypedRateLimitingInterface[string]
	schedulerQueue workqueue.TypedRateLimitingInterface[string]
	ips            *ipAllocator

	// schedMu serialises scheduling decisions; it is taken before mu, never under it.
	schedMu sync.Mutex

	mu        sync.Mutex
	nodes     map[string]simNode       // the nodes this simulator owns, by name
	nodeCount int                      // nodes ever added, for addresses
	timelines map[string]podTimeline   // by namespace/name
	assumed   map[types.UID]assumedPod // pods being bound or bound but not yet seen bound

	// timerMu guards timers. It is never taken by a timer's callback: a fake clock runs
	// callbacks under its own lock, which requeueAfter takes while holding timerMu.
	timerMu       sync.Mutex
	timers        map[string]pendingTimer // by namespace/name
	timersStopped bool

	cancel   context.CancelFunc
	wg       sync.WaitGroup
	stopOnce sync.Once
}

// simNode is what the simulator keeps about a node it owns.
type simNode struct {
	hostIP  string
	runtime string // container ID scheme: containerd, docker, cri-o
}

// assumedPod is a pod the scheduler has placed on a node before the cache shows it there.
type assumedPod struct {
	node string
	key  string // namespace/name, to find it in the cache
}

// podsByNode indexes pods by spec.nodeName, skipping terminal pods, which no longer take a
// place on their node.
const podsByNode = "nodeName"

// StartNodeSimulator starts a simulator against env and creates the nodes of WithNodes. Its
// logger comes from ctx; cancelling ctx stops it like Stop.
func StartNodeSimulator(ctx context.Context, env *Env, opts ...SimOption) (*NodeSimulator, error) {
	o := defaultSimOptions()
	for _, opt := range opts {
		opt(&o)
	}
	cfg := rest.CopyConfig(env.Config)
	// Without a rate limit the simulator keeps up with bursts of pods like a real fleet would.
	cfg.QPS, cfg.Burst = -1, -1
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("create http client: %w", err)
	}
	cs, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("create clientset: %w", err)
	}
	s := &NodeSimulator{
		cs:         cs,
		httpClient: httpClient,
		clock:      o.clock,
		timing:     o.timing,
		schedule:   o.schedule,
		logger:     klog.FromContext(ctx).WithName("node-simulator"),
		ips:        newIPAllocator(),
		nodes:      map[string]simNode{},
		timelines:  map[string]podTimeline{},
		assumed:    map[types.UID]assumedPod{},
		timers:     map[string]pendingTimer{},
	}
	if len(o.namespaces) > 0 {
		s.namespaces = map[string]bool{}
		for _, ns := range o.namespaces {
			s.namespaces[ns] = true
		}
	}
	// Unnamed queues register no metrics, which are process-wide. The queues keep the real
	// clock: their retry backoff must not wait for a test to step a fake one. Lifecycle
	// delays go through requeueAfter, on the injected clock.
	queueConfig := workqueue.TypedRateLimitingQueueConfig[string]{}
	limiter := func() workqueue.TypedRateLimiter[string] {
		return workqueue.NewTypedItemExponentialFailureRateLimiter[string](10*time.Millisecond, 2*time.Second)
	}
	s.kubeletQueue = workqueue.NewTypedRateLimitingQueueWithConfig(limiter(), queueConfig)
	s.schedulerQueue = workqueue.NewTypedRateLimitingQueueWithConfig(limiter(), queueConfig)

	s.factory = informers.NewSharedInformerFactory(cs, 0)
	podInformer := s.factory.Core().V1().Pods().Informer()
	if err := podInformer.AddIndexers(cache.Indexers{podsByNode: indexPodByNode}); err != nil {
		return nil, fmt.Errorf("index pods: %w", err)
	}
	if _, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    s.onPod,
		UpdateFunc: func(_, obj any) { s.onPod(obj) },
		DeleteFunc: s.onPodDeleted,
	}); err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	nodeInformer := s.factory.Core().V1().Nodes().Informer()
	if _, err := nodeInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    s.onNode,
		UpdateFunc: func(_, obj any) { s.onNode(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch nodes: %w", err)
	}
	s.podIndex = podInformer.GetIndexer()
	s.podLister = s.factory.Core().V1().Pods().Lister()
	s.nodeLister = s.factory.Core().V1().Nodes().Lister()

	runCtx, cancel := context.WithCancel(klog.NewContext(ctx, s.logger))
	s.cancel = cancel
	s.factory.Start(runCtx.Done())
	for typ, synced := range s.factory.WaitForCacheSync(runCtx.Done()) {
		if !synced {
			s.Stop()
			return nil, fmt.Errorf("sync %v cache: %w", typ, context.Cause(runCtx))
		}
	}
	for range o.workers {
		s.run(runCtx, s.kubeletQueue, s.syncPod)
	}
	if s.schedule {
		// Decisions are taken one at a time (see schedulePod), so each sees the bindings of the
		// one before and pods spread evenly; the workers write the bindings side by side.
		for range o.workers {
			s.run(runCtx, s.schedulerQueue, s.schedulePod)
		}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		<-runCtx.Done()
		s.kubeletQueue.ShutDown()
		s.schedulerQueue.ShutDown()
	}()
	if err := s.AddNodes(runCtx, o.nodes...); err != nil {
		s.Stop()
		return nil, err
	}
	s.logger.V(2).Info("node simulator started", "nodes", len(o.nodes), "scheduler", s.schedule)
	return s, nil
}

// Stop stops every goroutine the simulator started and waits for them. The nodes and pods
// stay; use DeleteNodes first to remove the nodes.
func (s *NodeSimulator) Stop() {
	s.stopOnce.Do(func() {
		s.cancel()
		s.stopTimers()
		s.kubeletQueue.ShutDown()
		s.schedulerQueue.ShutDown()
		s.wg.Wait()
		s.factory.Shutdown()
		s.httpClient.CloseIdleConnections()
	})
}

// run starts a worker that syncs keys from q until it shuts down. A failed sync is retried
// with backoff.
func (s *NodeSimulator) run(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], sync func(context.Context, string) error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			key, shutdown := q.Get()
			if shutdown {
				return
			}
			if err := sync(ctx, key); err != nil {
				if ctx.Err() == nil {
					s.logger.V(4).Info("sync failed, retrying", "pod", key, "err", err)
					q.AddRateLimited(key)
				}
			} else {
				q.Forget(key)
			}
			q.Done(key)
		}
	}()
}

func indexPodByNode(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" || isTerminal(pod.Status.Phase) {
		return nil, nil
	}
	return []string{pod.Spec.NodeName}, nil
}

func (s *NodeSimulator) onPod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	key := cache.MetaObjectToName(pod).String()
	if pod.Spec.NodeName == "" {
		if s.wantsToSchedule(pod) {
			s.schedulerQueue.Add(key)
		}
		return
	}
	s.mu.Lock()
	delete(s.assumed, pod.UID)
	_, owned := s.nodes[pod.Spec.NodeName]
	s.mu.Unlock()
	if owned {
		s.kubeletQueue.Add(key)
	}
}

func (s *NodeSimulator) onPodDeleted(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	key := cache.MetaObjectToName(pod).String()
	s.ips.release(pod.UID)
	s.mu.Lock()
	delete(s.assumed, pod.UID)
	if tl, ok := s.timelines[key]; ok && tl.uid == pod.UID {
		delete(s.timelines, key)
	}
	s.mu.Unlock()
	if pod.Spec.NodeName != "" && s.owns(pod.Spec.NodeName) {
		s.enqueueUnscheduled() // its place on the node is free
	}
}

// onNode resyncs the pods of an owned node whose state changed (a node turning Ready resumes
// its pods) and retries unscheduled pods, which may fit now.
func (s *NodeSimulator) onNode(obj any) {
	node, ok := obj.(*corev1.Node)
	if !ok || !s.owns(node.Name) {
		return
	}
	s.enqueuePodsOn(node.Name)
	s.enqueueUnscheduled()
}

func (s *NodeSimulator) enqueuePodsOn(node string) {
	pods, _ := s.podIndex.ByIndex(podsByNode, node)
	for _, obj := range pods {
		if pod, ok := obj.(*corev1.Pod); ok {
			s.kubeletQueue.Add(cache.MetaObjectToName(pod).String())
		}
	}
}

func (s *NodeSimulator) enqueueUnscheduled() {
	if !s.schedule {
		return
	}
	pods, _ := s.podLister.List(labels.Everything())
	for _, pod := range pods {
		if pod.Spec.NodeName == "" && s.wantsToSchedule(pod) {
			s.schedulerQueue.Add(cache.MetaObjectToName(pod).String())
		}
	}
}

func (s *NodeSimulator) owns(node string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.nodes[node]
	return ok
}

func (s *NodeSimulator) ownedNode(name string) (simNode, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.nodes[name]
	return n, ok
}

// pendingTimer is a wake-up set on the injected clock.
type pendingTimer struct {
	due   time.Time
	timer clock.Timer
}

// requeueAfter syncs the pod again once d has passed on the injected clock, unless an earlier
// wake-up is already set. The timer is registered before this returns, so a test that steps a
// fake clock after seeing the write that followed cannot step past it.
func (s *NodeSimulator) requeueAfter(key string, d time.Duration) {
	s.timerMu.Lock()
	defer s.timerMu.Unlock()
	if s.timersStopped {
		return
	}
	now := s.clock.Now()
	due := now.Add(d)
	if p, ok := s.timers[key]; ok {
		if p.due.After(now) && !p.due.After(due) {
			return
		}
		p.timer.Stop()
	}
	q := s.kubeletQueue
	s.timers[key] = pendingTimer{due: due, timer: s.clock.AfterFunc(d, func() { q.Add(key) })}
}

func (s *NodeSimulator) cancelTimer(key string) {
	s.timerMu.Lock()
	defer s.timerMu.Unlock()
	if p, ok := s.timers[key]; ok {
		p.timer.Stop()
		delete(s.timers, key)
	}
}

func (s *NodeSimulator) stopTimers() {
	s.timerMu.Lock()
	defer s.timerMu.Unlock()
	s.timersStopped = true
	for key, p := range s.timers {
		p.timer.Stop()
		delete(s.timers, key)
	}
}
