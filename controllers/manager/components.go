package manager

import (
	"k8s.io/component-base/featuregate"

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
	"github.com/kruise-addon/kruise-addon/controllers/podprobemarker"
	"github.com/kruise-addon/kruise-addon/controllers/podreadiness"
	"github.com/kruise-addon/kruise-addon/controllers/podunavailablebudget"
	"github.com/kruise-addon/kruise-addon/controllers/resourcedistribution"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarterminator"
	"github.com/kruise-addon/kruise-addon/controllers/statefulset"
	"github.com/kruise-addon/kruise-addon/controllers/uniteddeployment"
	"github.com/kruise-addon/kruise-addon/controllers/workloadspread"
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
		// kruise-daemon stops the sidecars through the ContainerRecreateRequests it creates.
		{Name: sidecarterminator.Name, Setup: sidecarterminator.SetupWithManager, Gates: []featuregate.Feature{features.KruiseDaemon, features.SidecarTerminator}},
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
