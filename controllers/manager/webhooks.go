package manager

import (
	"k8s.io/component-base/featuregate"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/controllers/launchpriority"
	"github.com/kruise-addon/kruise-addon/controllers/persistentpodstate/restore"
	"github.com/kruise-addon/kruise-addon/controllers/podprobemarker"
	"github.com/kruise-addon/kruise-addon/controllers/podunavailablebudget/guard"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset/inject"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/advancedcronjob"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/broadcastjob"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/cloneset"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/containerrecreaterequest"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/daemonset"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/ephemeraljob"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/imagepulljob"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/nodeimage"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/persistentpodstate"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/pod"
	ppmwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/podprobemarker"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/podunavailablebudget"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/resourcedistribution"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/sidecarset"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/statefulset"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/uniteddeployment"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/workloadspread"
	"github.com/kruise-addon/kruise-addon/controllers/workloadspread/placement"
	"github.com/kruise-addon/kruise-addon/features"
)

// WebhookSets lists every admission handler set kruise-manager serves.
func WebhookSets() []setup.Webhooks {
	wsStep, wsCheck := placement.Steps()
	return []setup.Webhooks{
		cloneset.Handlers,
		statefulset.Handlers,
		daemonset.Handlers,
		uniteddeployment.Handlers,
		// Deletion protection of Kubernetes' own kinds; each handler allows all while
		// ResourcesDeletionProtection is off.
		deletionprotection.Handlers,
		sidecarset.Handlers,
		// 1.8's step order: readiness gates (built in), WorkloadSpread, SidecarSet, container
		// launch priority, PodUnavailableBudget, PersistentPodState, EnhancedLivenessProbe,
		// PodProbeMarker on serverless pods (the last two behind their gates).
		gated(features.PodWebhook, pod.Handlers(wsStep, inject.StepFactory, launchpriority.StepFactory, guard.StepFactory, restore.StepFactory,
			pod.EnhancedLivenessStepFactory, podprobemarker.ServerlessStepFactory)),
		gated(features.PodWebhook, pod.ValidatingHandlers(wsCheck, guard.CheckFactory)),
		// Served whatever the gates: with both budget gates off it refuses budgets, as 1.8 does.
		podunavailablebudget.Handlers,
		workloadspread.Handlers,
		// Served whatever the gates: with KruiseDaemon off it refuses every request, as 1.8 does,
		// rather than letting requests nobody will act on in unchecked.
		containerrecreaterequest.Handlers,
		// Served whatever the gates: with KruiseDaemon or ImagePullJobGate off it refuses the jobs.
		imagepulljob.Handlers,
		// Served whatever the gates: with KruiseDaemon off it refuses NodeImages, as 1.8 does.
		nodeimage.Handlers,
		// Served whatever the gates: with ResourceDistributionGate off it refuses distributions.
		resourcedistribution.Handlers,
		persistentpodstate.Handlers,
		broadcastjob.Handlers,
		advancedcronjob.Handlers,
		ephemeraljob.Handlers,
		// Served whatever the gates: with PodProbeMarkerGate or KruiseDaemon off it refuses markers.
		ppmwebhook.Handlers,
	}
}

// gated serves a handler set only while gate is on.
func gated(gate featuregate.Feature, set setup.Webhooks) setup.Webhooks {
	return func(mgr manager.Manager, d setup.Deps) map[string]admission.Handler {
		if !d.Gates.Enabled(gate) {
			return nil
		}
		return set(mgr, d)
	}
}
