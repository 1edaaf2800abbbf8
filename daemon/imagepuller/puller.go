package imagepuller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// Defaults of a tag's pull policy, as in 1.8.
const (
	DefaultTimeoutSeconds = 600
	DefaultBackoffLimit   = 3
)

// DefaultStatusInterval is the least time between two status writes while tags are still
// waiting or pulling. 1.8 writes such progress every 3 to 5 s; a write that leaves every tag
// Succeeded or Failed is never held back.
const DefaultStatusInterval = time.Second

// Options tune a Puller.
type Options struct {
	// NodeName is the node whose NodeImage (of the same name) the puller serves.
	NodeName string
	// Workers is how many pulls run at once.
	Workers int
	// RetryDelay is the pause between two attempts of one tag; the n-th retry waits n times it.
	RetryDelay time.Duration
	// StatusInterval is the least time between two status writes while some tag is Waiting or
	// Pulling (DefaultStatusInterval when 0); once every tag is final the status goes out at once.
	StatusInterval time.Duration
	// Clock stamps start and completion times and paces retries.
	Clock clock.Clock
	// Registerer receives the pull metrics; nil registers nothing.
	Registerer prometheus.Registerer
	// ConfigNamespace is the only namespace pull secrets are read from (the daemon's
	// --daemon-config-namespace); empty reads them where the NodeImage says.
	ConfigNamespace string
	// Secrets reads pull secrets from the daemon's cache of ConfigNamespace; a secret it does
	// not hold yet (a copy the manager has just made) is read live. Nil reads every one live.
	Secrets client.Reader
	// Recorder receives the events of finished pulls (PullImageSucceed, PullImageFailed); nil
	// records none.
	Recorder record.EventRecorder
}

// Puller reconciles its node's NodeImage: it pulls what the spec lists and reports status.
type Puller struct {
	client client.Client
	// live reads the NodeImage when a status write conflicted, and pull secrets the cache
	// does not hold.
	live   client.Reader
	dirty  chan struct{}
	images criv1.ImageServiceClient
	opts   Options
	queue  workqueue.TypedInterface[tagKey]
	pulls  *prometheus.CounterVec

	mu     sync.Mutex
	tasks  map[tagKey]*task
	states map[tagKey]appsv1alpha1.ImageTagStatus
	// written is the NodeImage as the last status write left it, and writtenFrom the
	// resourceVersion that write replaced: while the cache still shows writtenFrom, it has not
	// seen the write yet and written is the newer copy.
	written     *appsv1alpha1.NodeImage
	writtenFrom string
	// lastWrite is when the last status write succeeded.
	lastWrite time.Time
	// nodeRef is the NodeImage as events name it, from the last reconcile.
	nodeRef *corev1.ObjectReference
}

// task is the spec of one tag version the puller has taken up.
type task struct {
	spec    appsv1alpha1.ImageTagSpec
	secrets []appsv1alpha1.ReferenceObject
	sandbox *appsv1alpha1.SandboxConfig
}

// New returns a puller; c reads the NodeImage from the node-scoped cache and writes its status,
// live reads from the apiserver: the NodeImage after a status write met a conflict, and pull
// secrets that Options.Secrets does not hold.
func New(c client.Client, live client.Reader, images criv1.ImageServiceClient, o Options) *Puller {
	if o.Workers < 1 {
		o.Workers = 1
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.RetryDelay == 0 {
		o.RetryDelay = time.Second
	}
	if o.StatusInterval == 0 {
		o.StatusInterval = DefaultStatusInterval
	}
	p := &Puller{
		client: c, live: live, images: images, opts: o,
		dirty:  make(chan struct{}, 1),
		queue:  workqueue.NewTyped[tagKey](),
		tasks:  map[tagKey]*task{},
		states: map[tagKey]appsv1alpha1.ImageTagStatus{},
		pulls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kruise_daemon_image_pulls_total",
			Help: "Image tag pulls finished by kruise-daemon, by result.",
		}, []string{"result"}),
	}
	if o.Registerer != nil {
		o.Registerer.MustRegister(p.pulls)
	}
	return p
}

// SetupWithManager registers the reconciler (on the node's NodeImage) and the worker pool.
func (p *Puller) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.Add(p); err != nil {
		return fmt.Errorf("add image pull workers: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).Named("nodeimage-puller").For(&appsv1alpha1.NodeImage{}).Complete(p)
}

// Start runs the workers until ctx ends; in-flight pulls are cancelled.
func (p *Puller) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.writeStatusLoop(ctx)
	}()
	for i := 0; i < p.opts.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p.work(ctx) {
			}
		}()
	}
	<-ctx.Done()
	p.queue.ShutDown()
	wg.Wait()
	return nil
}

// Reconcile takes up every tag version of the spec it has not taken up yet and writes status.
func (p *Puller) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req.Name != p.opts.NodeName {
		return ctrl.Result{}, nil
	}
	ni := &appsv1alpha1.NodeImage{}
	if err := p.client.Get(ctx, req.NamespacedName, ni); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	p.mu.Lock()
	p.nodeRef = nodeImageRef(ni.Name, ni.UID)
	seen := map[tagKey]bool{}
	for img, is := range ni.Spec.Images {
		for _, t := range is.Tags {
			k := tagKey{img, t.Tag}
			seen[k] = true
			if cur, ok := p.tasks[k]; ok && cur.spec.Version >= t.Version {
				continue
			}
			p.tasks[k] = &task{spec: t, secrets: is.PullSecrets, sandbox: is.SandboxConfig}
			if st, ok := adoptable(ni.Status, img, t); ok {
				p.states[k] = st
				continue
			}
			p.states[k] = appsv1alpha1.ImageTagStatus{Tag: t.Tag, Phase: appsv1alpha1.ImagePhaseWaiting, Version: t.Version}
			p.queue.Add(k)
		}
	}
	for k := range p.tasks {
		if !seen[k] {
			delete(p.tasks, k)
			delete(p.states, k)
		}
	}
	// The watch event of the puller's own status write lands here too: it asks for no write,
	// since the status already says what the puller knows.
	current := apiequality.Semantic.DeepEqual(buildStatus(ni.Spec, p.states, ni.Status, p.now()), ni.Status)
	p.mu.Unlock()
	if !current {
		p.markDirty()
	}
	return ctrl.Result{}, nil
}

// now is the clock's time at the precision the apiserver keeps (seconds), so that a status
// read back compares equal to the one the puller wrote.
func (p *Puller) now() metav1.Time {
	return metav1.NewTime(p.opts.Clock.Now()).Rfc3339Copy()
}

// markDirty asks for a status write; requests made while one is in flight collapse into one
// more write, so that a burst of finished pulls costs a few API calls, not one each.
func (p *Puller) markDirty() {
	select {
	case p.dirty <- struct{}{}:
	default:
	}
}

// writeStatusLoop writes the status whenever it is marked dirty, paced by holdStatus, until
// ctx ends.
func (p *Puller) writeStatusLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.dirty:
		}
		if !p.holdStatus(ctx) {
			return
		}
		if err := p.syncStatus(ctx); err != nil && ctx.Err() == nil {
			klog.FromContext(ctx).Error(err, "writing nodeimage status")
			// Try again a little later; a new change would also bring a new attempt.
			select {
			case <-ctx.Done():
				return
			case <-p.opts.Clock.After(p.opts.RetryDelay):
			}
			p.markDirty()
		}
	}
}

// holdStatus waits until statusDelay lets the next status write go; changes arriving meanwhile
// ride along in it, and one that leaves every tag final releases it at once. It returns false
// once ctx ends.
func (p *Puller) holdStatus(ctx context.Context) bool {
	for {
		p.mu.Lock()
		d := statusDelay(p.lastWrite, p.opts.Clock.Now(), p.opts.StatusInterval, settled(p.states))
		p.mu.Unlock()
		if d <= 0 {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-p.opts.Clock.After(d):
		case <-p.dirty:
		}
	}
}

// statusDelay is how long a status write waits: nothing when every tag is final or no write
// was made yet, else what remains of interval since the last write.
func statusDelay(lastWrite, now time.Time, interval time.Duration, settled bool) time.Duration {
	if settled || lastWrite.IsZero() {
		return 0
	}
	return lastWrite.Add(interval).Sub(now)
}

// settled reports whether every tag the puller holds is Succeeded or Failed.
func settled(states map[tagKey]appsv1alpha1.ImageTagStatus) bool {
	for _, st := range states {
		if st.Phase != appsv1alpha1.ImagePhaseSucceeded && st.Phase != appsv1alpha1.ImagePhaseFailed {
			return false
		}
	}
	return true
}

// syncStatus writes the status computed from the current spec and states, if it changed. It
// starts from the cached NodeImage (or the copy its last write left, if the cache has not caught
// up) and reads the apiserver only after a conflict.
func (p *Puller) syncStatus(ctx context.Context) error {
	conflicted := false
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		ni, err := p.lastNodeImage(ctx, conflicted)
		conflicted = true
		if err != nil {
			return err
		}
		p.mu.Lock()
		want := buildStatus(ni.Spec, p.states, ni.Status, p.now())
		p.mu.Unlock()
		if apiequality.Semantic.DeepEqual(want, ni.Status) {
			return nil
		}
		ni.Status = want
		from := ni.ResourceVersion
		if err := p.client.Status().Update(ctx, ni); err != nil {
			return err
		}
		p.mu.Lock()
		p.written, p.writtenFrom, p.lastWrite = ni, from, p.opts.Clock.Now()
		p.mu.Unlock()
		return nil
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("update nodeimage %s status: %w", p.opts.NodeName, err)
	}
	return nil
}

// lastNodeImage returns the newest NodeImage the puller knows of without asking the
// apiserver, or the apiserver's copy when live is set.
func (p *Puller) lastNodeImage(ctx context.Context, live bool) (*appsv1alpha1.NodeImage, error) {
	key := types.NamespacedName{Name: p.opts.NodeName}
	ni := &appsv1alpha1.NodeImage{}
	if live {
		return ni, p.live.Get(ctx, key, ni)
	}
	if err := p.client.Get(ctx, key, ni); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.written != nil && ni.ResourceVersion == p.writtenFrom {
		return p.written.DeepCopy(), nil
	}
	return ni, nil
}

// work pulls one queued tag; it returns false once the queue is shut down.
func (p *Puller) work(ctx context.Context) bool {
	k, quit := p.queue.Get()
	if quit {
		return false
	}
	defer p.queue.Done(k)
	p.mu.Lock()
	t, ok := p.tasks[k]
	p.mu.Unlock()
	if !ok {
		return true
	}
	version := t.spec.Version
	began := p.opts.Clock.Now()
	start := p.now()
	p.setState(k, version, appsv1alpha1.ImageTagStatus{Tag: k.Tag, Phase: appsv1alpha1.ImagePhasePulling, StartTime: &start, Version: version})
	p.markDirty()

	imageID, err := p.pull(ctx, k, t)
	if ctx.Err() != nil {
		return true
	}
	done := p.now()
	st := appsv1alpha1.ImageTagStatus{Tag: k.Tag, StartTime: &start, CompletionTime: &done, Version: version}
	if err != nil {
		st.Phase, st.Message = appsv1alpha1.ImagePhaseFailed, err.Error()
		p.pulls.WithLabelValues("failed").Inc()
		klog.FromContext(ctx).Info("image pull failed", "image", imageRef(k.Image, k.Tag), "err", err)
	} else {
		st.Phase, st.Progress, st.ImageID, st.Message = appsv1alpha1.ImagePhaseSucceeded, 100, imageID, "image pulled"
		p.pulls.WithLabelValues("succeeded").Inc()
		klog.FromContext(ctx).V(2).Info("image pulled", "image", imageRef(k.Image, k.Tag), "imageID", imageID)
	}
	p.setState(k, version, st)
	p.markDirty()
	p.recordPull(imageRef(k.Image, k.Tag), t, p.opts.Clock.Since(began), err)
	return true
}

// setState records st for k unless the spec moved on to another version meanwhile.
func (p *Puller) setState(k tagKey, version int64, st appsv1alpha1.ImageTagStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t, ok := p.tasks[k]; ok && t.spec.Version == version {
		p.states[k] = st
	}
}

// pull runs the attempts of one tag: 1 + backoffLimit tries, each bounded by the timeout, all
// bounded by activeDeadlineSeconds. It returns the image ID or the runtime's last message.
func (p *Puller) pull(ctx context.Context, k tagKey, t *task) (string, error) {
	ref := imageRef(k.Image, k.Tag)
	timeout := time.Duration(DefaultTimeoutSeconds) * time.Second
	backoff := DefaultBackoffLimit
	if pp := t.spec.PullPolicy; pp != nil {
		if pp.TimeoutSeconds != nil && *pp.TimeoutSeconds > 0 {
			timeout = time.Duration(*pp.TimeoutSeconds) * time.Second
		}
		if pp.BackoffLimit != nil && *pp.BackoffLimit >= 0 {
			backoff = int(*pp.BackoffLimit)
		}
		if pp.ActiveDeadlineSeconds != nil && *pp.ActiveDeadlineSeconds > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, time.Duration(*pp.ActiveDeadlineSeconds)*time.Second)
			defer cancel()
		}
	}
	if t.spec.ImagePullPolicy != appsv1alpha1.PullAlways {
		if st, err := p.images.ImageStatus(ctx, &criv1.ImageStatusRequest{Image: &criv1.ImageSpec{Image: ref}}); err == nil && st.GetImage() != nil {
			return st.GetImage().GetId(), nil
		}
	}
	auths, err := p.resolveSecrets(ctx, ref, t.secrets)
	if err != nil {
		return "", err
	}
	var last error
	attempts := backoff + 1
	for i := 0; i < attempts; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return "", fmt.Errorf("pull %s stopped after %d attempts: %w; last error: %s", ref, i, ctx.Err(), runtimeMessage(last))
			case <-p.opts.Clock.After(time.Duration(i) * p.opts.RetryDelay):
			}
		}
		id, err := p.pullOnce(ctx, ref, auths, t.sandbox, timeout)
		if err == nil {
			return id, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	return "", fmt.Errorf("pull %s failed after %d attempts: %s", ref, attempts, runtimeMessage(last))
}

// pullOnce tries each matching credential (or none), returning the first success.
func (p *Puller) pullOnce(ctx context.Context, ref string, auths []*criv1.AuthConfig, sandbox *appsv1alpha1.SandboxConfig, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if len(auths) == 0 {
		auths = []*criv1.AuthConfig{nil}
	}
	var last error
	for _, a := range auths {
		resp, err := p.images.PullImage(ctx, &criv1.PullImageRequest{
			Image:         &criv1.ImageSpec{Image: ref},
			Auth:          a,
			SandboxConfig: sandboxConfig(sandbox),
		})
		if err == nil {
			return resp.GetImageRef(), nil
		}
		last = err
	}
	return "", last
}

// resolveSecrets reads the referenced pull secrets. A missing secret fails the tag with a
// message naming it, because pulling without it would only fail less clearly.
func (p *Puller) resolveSecrets(ctx context.Context, ref string, refs []appsv1alpha1.ReferenceObject) ([]*criv1.AuthConfig, error) {
	var secrets []corev1.Secret
	for _, r := range refs {
		if ns := p.opts.ConfigNamespace; ns != "" && r.Namespace != ns {
			return nil, fmt.Errorf("pull secret %s/%s is outside the daemon config namespace %s (--daemon-config-namespace); the daemon reads secrets only there", r.Namespace, r.Name, ns)
		}
		s := corev1.Secret{}
		if err := p.readSecret(ctx, types.NamespacedName{Namespace: r.Namespace, Name: r.Name}, &s); err != nil {
			return nil, fmt.Errorf("read pull secret %s/%s: %w", r.Namespace, r.Name, err)
		}
		secrets = append(secrets, s)
	}
	return authsFor(ref, secrets), nil
}

// secretCacheWait bounds how long a pull waits for the secret cache to sync before it reads
// the apiserver instead.
const secretCacheWait = 5 * time.Second

// readSecret reads a pull secret from the cache, and from the apiserver when the cache does not
// hold it: the manager copies a secret just before it names it in the NodeImage, and the two
// watches may deliver those writes in either order. Only the config namespace is cached.
func (p *Puller) readSecret(ctx context.Context, key types.NamespacedName, s *corev1.Secret) error {
	if p.opts.Secrets != nil && p.opts.ConfigNamespace != "" {
		cctx, cancel := context.WithTimeout(ctx, secretCacheWait)
		err := p.opts.Secrets.Get(cctx, key, s)
		cancel()
		if err == nil {
			return nil
		}
	}
	return p.live.Get(ctx, key, s)
}

func sandboxConfig(s *appsv1alpha1.SandboxConfig) *criv1.PodSandboxConfig {
	if s == nil {
		return nil
	}
	return &criv1.PodSandboxConfig{Labels: s.Labels, Annotations: s.Annotations}
}

// runtimeMessage is the runtime's own text of a gRPC error.
func runtimeMessage(err error) string {
	if err == nil {
		return ""
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out: " + err.Error()
	}
	if s, ok := status.FromError(err); ok {
		return s.Message()
	}
	return err.Error()
}
