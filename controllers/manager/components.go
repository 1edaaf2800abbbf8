package manager

import (
	"k8s.io/component-base/featuregate"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/controllers/advancedcronjob"
	"github.com/kruise-addon/kruise-addon/controllers/broadcastjob"
	"github.com/kruise-addon/kruise-addon/controllers/cloneset"
	"github.com/kruise-addon/kruise-addon/controllers/containerrecreaterequest"
	"github.com/kruise-addon/kruise-addon/controllers/daemonset"
	"github.com/kruise-addon/kruise-addon/controllers/ephemeraljob"
	"github.com/kruise-addon/kruise-addon/controllers/imagelistpulljob"
	"github.com/kruise-addon/kruise-addon/controllers/imagepulljob"
	"github.com/kruise-addon/kruise-addon/controllers/launchpriority"
	"github.com/kruise-addon/kruise-addon/controllers/nodeimage"
	"github.com/kruise-addon/kruise-addon/controllers/nodepodprobe"
	"github.com/kruise-addon/kruise-addon/controllers/persistentpodstate"
	ppspodhook "github.com/kruise-addon/kruise-addon/controllers/persistentpodstate/podhook"
	"github.com/kruise-addon/kruise-addon/controllers/podprobemarker"
	"github.com/kruise-addon/kruise-addon/controllers/podreadiness"
	"github.com/kruise-addon/kruise-addon/controllers/podunavailablebudget"
	pubhook "github.com/kruise-addon/kruise-addon/controllers/podunavailablebudget/podhook"
	"github.com/kruise-addon/kruise-addon/controllers/resourcedistribution"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset"
	sidecarinject "github.com/kruise-addon/kruise-addon/controllers/sidecarset/inject"
	"github.com/kruise-addon/kruise-addon/controllers/statefulset"
	"github.com/kruise-addon/kruise-addon/controllers/uniteddeployment"
	acjwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/advancedcronjob"
	broadcastjobwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/broadcastjob"
	clonesetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/cloneset"
	crrwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/containerrecreaterequest"
	daemonsetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/daemonset"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
	ejobwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/ephemeraljob"
	imagepulljobwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/imagepulljob"
	ppswebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/persistentpodstate"
	podwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/pod"
	podprobemarkerwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/podprobemarker"
	pubwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/podunavailablebudget"
	rdwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/resourcedistribution"
	sidecarsetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/sidecarset"
	statefulsetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/statefulset"
	uniteddeploymentwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/uniteddeployment"
	workloadspreadwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/workloadspread"
	"github.com/kruise-addon/kruise-addon/controllers/workloadspread"
	"github.com/kruise-addon/kruise-addon/controllers/workloadspread/podhook"
	"github.com/kruise-addon/kruise-addon/features"
)

// Controllers lists every controller kruise-manager runs on the leader, by the name of its
// --<name>-workers flag, with the feature gates it needs. Adding a kind is one line here.
func Controllers() []Component {
	// Kinds that kruise-daemon acts on need it.
	daemon := []featuregate.Feature{features.KruiseDaemon}
	pullJobs := []featuregate.Feature{features.KruiseDaemon, features.ImagePullJobGate}
	return []Component{
		{Name: cloneset.Name, Setup: cloneset.SetupWithManager},
		{Name: statefulset.Name, Setup: statefulset.SetupWithManager},
		{Name: daemonset.Name, Setup: daemonset.SetupWithManager},
		// Every new gated pod waits in this queue for its first KruisePodReady condition, and each
		// reconcile is two small requests: three workers kept pods of a 1000-pod scale-up not
		// ready for seconds.
		{Name: podreadiness.Name, Setup: podreadiness.SetupWithManager, Workers: podreadiness.DefaultWorkers},
		{Name: nodeimage.Name, Setup: nodeimage.SetupWithManager, Gates: daemon},
		{Name: imagepulljob.Name, Setup: imagepulljob.SetupWithManager, Gates: pullJobs},
		{Name: imagelistpulljob.Name, Setup: imagelistpulljob.SetupWithManager, Gates: pullJobs},
		{Name: containerrecreaterequest.Name, Setup: containerrecreaterequest.SetupWithManager, Gates: daemon},
		{Name: advancedcronjob.Name, Setup: advancedcronjob.SetupWithManager},
		{Name: broadcastjob.Name, Setup: broadcastjob.SetupWithManager},
		{Name: ephemeraljob.Name, Setup: ephemeraljob.SetupWithManager},
		{Name: uniteddeployment.Name, Setup: uniteddeployment.SetupWithManager},
		{Name: workloadspread.Name, Setup: workloadspread.SetupWithManager, Gates: []featuregate.Feature{features.WorkloadSpread}},
		{Name: sidecarset.Name, Setup: sidecarset.SetupWithManager},
		// 1.8 runs both with PodProbeMarkerGate; kruise-daemon runs the probes.
		{Name: podprobemarker.Name, Setup: podprobemarker.SetupWithManager, Gates: []featuregate.Feature{features.KruiseDaemon, features.PodProbeMarkerGate}},
		{Name: nodepodprobe.Name, Setup: nodepodprobe.SetupWithManager, Gates: []featuregate.Feature{features.KruiseDaemon, features.PodProbeMarkerGate}},
		{Name: launchpriority.Name, Setup: launchpriority.SetupWithManager, Gates: []featuregate.Feature{features.PodWebhook}},
		{Name: persistentpodstate.Name, Setup: persistentpodstate.SetupWithManager},
		{Name: resourcedistribution.Name, Setup: resourcedistribution.SetupWithManager, Gates: []featuregate.Feature{features.ResourceDistributionGate}},
		// Either budget gate runs it; with both off it does not start (its setup says so), as in 1.8.
		{Name: podunavailablebudget.Name, Setup: podunavailablebudget.SetupWithManager},
	}
}

// WebhookSets lists every admission handler set kruise-manager serves.
func WebhookSets() []setup.Webhooks {
	wsStep, wsCheck := podhook.Steps()
	return []setup.Webhooks{
		clonesetwebhook.Handlers,
		statefulsetwebhook.Handlers,
		daemonsetwebhook.Handlers,
		uniteddeploymentwebhook.Handlers,
		// Deletion protection of Kubernetes' own kinds; each handler allows all while
		// ResourcesDeletionProtection is off.
		deletionprotection.Handlers,
		sidecarsetwebhook.Handlers,
		// 1.8's step order: readiness gates (built in), WorkloadSpread, SidecarSet, container
		// launch priority, PodUnavailableBudget, PersistentPodState.
		gated(features.PodWebhook, podwebhook.Handlers(wsStep, sidecarinject.StepFactory, launchpriority.StepFactory, pubhook.StepFactory, ppspodhook.StepFactory)),
		gated(features.PodWebhook, podwebhook.ValidatingHandlers(wsCheck, pubhook.CheckFactory)),
		// Served whatever the gates: with both budget gates off it refuses budgets, as 1.8 does.
		pubwebhook.Handlers,
		workloadspreadwebhook.Handlers,
		// Served whatever the gates: with KruiseDaemon off it refuses every request, as 1.8 does,
		// rather than letting requests nobody will act on in unchecked.
		crrwebhook.Handlers,
		// Served whatever the gates: with KruiseDaemon or ImagePullJobGate off it refuses the jobs.
		imagepulljobwebhook.Handlers,
		// Served whatever the gates: with ResourceDistributionGate off it refuses distributions.
		rdwebhook.Handlers,
		ppswebhook.Handlers,
		broadcastjobwebhook.Handlers,
		acjwebhook.Handlers,
		ejobwebhook.Handlers,
		// Served whatever the gates: with PodProbeMarkerGate or KruiseDaemon off it refuses markers.
		podprobemarkerwebhook.Handlers,
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
