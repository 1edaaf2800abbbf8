package broadcastjob

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/nodepin"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ownedpods"
	"github.com/kruise-addon/kruise-addon/controllers/internal/slowstart"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Name is the controller's name, also its key for --<name>-workers.
const Name = "broadcastjob"

// controllerKind is the GroupVersionKind of BroadcastJob, for the pods' owner references.
var controllerKind = appsv1alpha1.GroupVersion.WithKind("BroadcastJob")

// recheck is how soon a pass that waits on the cache runs again, or one that left nodes
// without a pod for a later pass.
const recheck = time.Second

// Options configure the controller.
type Options struct {
	// AssignPodsByScheduler gives each pod a required node affinity to its node and lets the
	// scheduler bind it (1.8's --assign-bcj-pods-by-scheduler, default true); false sets
	// spec.nodeName directly.
	AssignPodsByScheduler bool
}

// SetupWithManager registers the controller with the manager's --assign-bcj-pods-by-scheduler.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	return Setup(Options{AssignPodsByScheduler: d.AssignBroadcastJobPodsByScheduler})(mgr, d)
}

// Setup returns the controller's registration with o.
func Setup(o Options) setup.Controller {
	return func(mgr ctrl.Manager, d setup.Deps) error {
		r := &Reconciler{Tools: kit.ToolsFor(mgr, d, Name), opts: o, scaleExp: expectations.NewScale(d.Clock)}
		pods := ownedpods.Handler{Kind: controllerKind, Scale: r.scaleExp, Update: expectations.NewResourceVersion(d.Clock), CreateName: createKeyOf}
		// A job being deleted is still worked on: its pods go with it.
		prologue := kit.Object[*appsv1alpha1.BroadcastJob]{Reader: r.Client, Kind: "BroadcastJob", Gone: kit.Forget(r.scaleExp.Forget), KeepDeleting: true, Pass: r.reconcile}
		return kit.Setup(mgr, d, Name, prologue, func(b *kit.Builder) *kit.Builder {
			return b.For(&appsv1alpha1.BroadcastJob{}).
				Watches(&corev1.Pod{}, pods.EventHandler()).
				Watches(&corev1.Node{}, kit.All(r.Client, &appsv1alpha1.BroadcastJobList{}), builder.WithPredicates(nodepin.PlacementChanged()))
		})
	}
}

// Reconciler reconciles BroadcastJobs.
type Reconciler struct {
	kit.Tools
	opts Options
	// scaleExp holds the pod creations (by node) and deletions the cache has not shown yet, so
	// that a pass never puts a second pod on a node.
	scaleExp *expectations.Scale
}

// createKey is the expectation key of a pod creation on node.
func createKey(node string) string { return "node/" + node }

// createKeyOf is the key a created pod is observed under: that of its target node.
func createKeyOf(obj client.Object) string {
	if pod, ok := obj.(*corev1.Pod); ok {
		return createKey(nodepin.TargetNode(pod))
	}
	return createKey("")
}

// reconcile reads the job's pods and the nodes, plans the pass, creates and deletes pods, and
// writes the status if it changed.
func (r *Reconciler) reconcile(ctx context.Context, job *appsv1alpha1.BroadcastJob) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	if ownedpods.AwaitScale(log, r.scaleExp, kit.Key(job)) {
		return ctrl.Result{RequeueAfter: recheck}, nil
	}

	pods, err := r.ownPods(ctx, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	var nodeList corev1.NodeList
	if err := r.Client.List(ctx, &nodeList); err != nil {
		return ctrl.Result{}, fmt.Errorf("list nodes: %w", err)
	}
	nodes := make([]*corev1.Node, len(nodeList.Items))
	for i := range nodeList.Items {
		nodes[i] = &nodeList.Items[i]
	}
	p, err := planPass(planInput{job: job, nodes: nodes, pods: pods, now: r.Clock.Now()})
	if err != nil {
		// Only a malformed parallelism gets here; an edit of the spec triggers a new pass.
		r.Recorder.Eventf(job, corev1.EventTypeWarning, "InvalidSpec", "%v", err)
		log.Error(err, "Cannot plan the job")
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	if p.deleteJob {
		if err := r.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("delete finished job: %w", err)
		}
		log.Info("Deleted finished job after its ttlSecondsAfterFinished")
		return ctrl.Result{}, nil
	}
	more, applyErr := r.apply(ctx, job, p)
	for _, e := range p.events {
		typ := corev1.EventTypeNormal
		if e.warning {
			typ = corev1.EventTypeWarning
		}
		r.Recorder.Event(job, typ, e.reason, e.message)
	}
	stale, err := kit.WriteStatus(ctx, r.Client, job, func(job *appsv1alpha1.BroadcastJob) { job.Status = p.status })
	if err != nil {
		return ctrl.Result{}, err
	}
	if applyErr != nil {
		return ctrl.Result{}, applyErr
	}
	return kit.Sooner(ctrl.Result{RequeueAfter: p.requeueAfter}, kit.After(more, recheck), stale), nil
}

// ownPods lists the pods that carry the job's UID label and are controlled by it.
func (r *Reconciler) ownPods(ctx context.Context, job *appsv1alpha1.BroadcastJob) ([]*corev1.Pod, error) {
	var list corev1.PodList
	if err := r.Client.List(ctx, &list, client.InNamespace(job.Namespace), client.MatchingLabels{appsv1alpha1.BroadcastJobControllerUIDLabel: string(job.UID)}); err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	var out []*corev1.Pod
	for i := range list.Items {
		if ref := metav1.GetControllerOf(&list.Items[i]); ref != nil && ref.UID == job.UID {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// apply deletes and creates the planned pods; creation runs in slow-start batches that stop
// when the job changes or goes, at most slowstart.MaxPerReconcile in one reconcile. more says
// that nodes are left for a later reconcile.
func (r *Reconciler) apply(ctx context.Context, job *appsv1alpha1.BroadcastJob, p plan) (more bool, err error) {
	log := ctrl.LoggerFrom(ctx)
	key := types.NamespacedName{Namespace: job.Namespace, Name: job.Name}.String()
	var errs []error
	for _, pod := range p.delete {
		r.scaleExp.Expect(key, expectations.Delete, pod.Name)
		if err := r.Client.Delete(ctx, pod); client.IgnoreNotFound(err) != nil {
			r.scaleExp.Observe(key, expectations.Delete, pod.Name)
			errs = append(errs, fmt.Errorf("delete pod %s: %w", pod.Name, err))
			continue
		}
		r.Recorder.Eventf(job, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted pod %s", pod.Name)
	}
	if len(p.create) == 0 {
		return false, errors.Join(errs...)
	}
	res, err := slowstart.Run(ctx, len(p.create), slowstart.Reread(r.Client, "BroadcastJob", job), func(ctx context.Context, from, size int) error {
		batchErrs := make([]error, size)
		ownedpods.Parallel(size, func(i int) {
			node := p.create[from+i]
			pod := r.newPod(job, node)
			r.scaleExp.Expect(key, expectations.Create, createKey(node))
			if err := r.Client.Create(ctx, pod); err != nil {
				r.scaleExp.Observe(key, expectations.Create, createKey(node))
				r.Recorder.Eventf(job, corev1.EventTypeWarning, "FailedCreate", "Create pod on node %s: %v", node, err)
				batchErrs[i] = fmt.Errorf("create pod on node %s: %w", node, err)
				return
			}
			log.V(2).Info("Created pod", "Pod", klog.KObj(pod), "Node", node)
		})
		return errors.Join(batchErrs...)
	})
	if err != nil {
		errs = append(errs, err)
	}
	if res.Stopped != "" {
		log.V(2).Info("Stopped creating pods", "reason", res.Stopped, "created", res.Created, "planned", len(p.create))
	}
	return res.More, errors.Join(errs...)
}

// newPod builds the job's pod for node from its template.
func (r *Reconciler) newPod(job *appsv1alpha1.BroadcastJob, node string) *corev1.Pod {
	tmpl := job.Spec.Template.DeepCopy()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    job.Name + "-",
			Namespace:       job.Namespace,
			Labels:          tmpl.Labels,
			Annotations:     tmpl.Annotations,
			Finalizers:      tmpl.Finalizers,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, controllerKind)},
		},
		Spec: tmpl.Spec,
	}
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[appsv1alpha1.BroadcastJobNameLabel] = job.Name
	pod.Labels[appsv1alpha1.BroadcastJobControllerUIDLabel] = string(job.UID)
	if r.opts.AssignPodsByScheduler {
		nodepin.PinToNode(&pod.Spec, node)
	} else {
		pod.Spec.NodeName = node
	}
	return pod
}
