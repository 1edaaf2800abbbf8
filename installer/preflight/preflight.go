package preflight

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/kruise-addon/kruise-addon/installer/facts"
	"github.com/kruise-addon/kruise-addon/installer/placement"
	"github.com/kruise-addon/kruise-addon/installer/spec"
	"github.com/kruise-addon/kruise-addon/versions"
)

// Severity grades a verdict.
type Severity string

const (
	OK      Severity = "ok"
	Warning Severity = "warning"
	Refused Severity = "refused"
)

// Check names.
const (
	CheckClusterVersion  = "cluster-version"
	CheckForeign         = "foreign-installation"
	CheckRuntime         = "runtime"
	CheckPlacement       = "placement"
	CheckWebhookRisk     = "webhook-risk"
	CheckSpec            = "spec"
	CheckConfigNamespace = "config-namespace"
)

// ConfigNamespaceValue is the chart value that names the daemon config namespace.
const ConfigNamespaceValue = "daemon.configNamespace"

// SystemNamespaces are the namespaces the add-on never uses as its daemon config namespace: the
// manager may delete Secrets there and the daemon may read them, and a release must never own
// them.
func SystemNamespaces() []string {
	return []string{"default", "kube-node-lease", "kube-public", "kube-system"}
}

// IsSystemNamespace reports whether name is one of SystemNamespaces.
func IsSystemNamespace(name string) bool {
	for _, s := range SystemNamespaces() {
		if s == name {
			return true
		}
	}
	return false
}

// Verdict is one check's outcome.
type Verdict struct {
	Check    string   `json:"check"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// Fix says what to do about a warning or refusal.
	Fix string `json:"fix,omitempty"`
}

// Input is everything the checks read.
type Input struct {
	Facts facts.Facts
	Table *versions.Table
	// AddonVersion is the version to install, usually the chart's appVersion.
	AddonVersion string
	// ReleaseName and Namespace identify our release.
	ReleaseName, Namespace string
	Spec                   spec.Spec
	Placement              placement.Options
	// ExcludeUnsupportedNodes keeps the daemon off nodes whose runtime it cannot use, instead of
	// refusing.
	ExcludeUnsupportedNodes bool
	// PodFailurePolicy is the pod webhooks' failurePolicy, Ignore unless the user changed it.
	PodFailurePolicy string
	// Wait is an apply that waits for readiness; without it a cluster with no nodes yet is a
	// warning, not a refusal (the pods wait for nodes to join).
	Wait bool
	// ConfigNamespace is the daemon config namespace the values choose (daemon.configNamespace,
	// chart default applied); empty leaves it unchecked.
	ConfigNamespace string
}

// Report is every verdict, plus what the install must apply because of them.
type Report struct {
	Verdicts []Verdict `json:"verdicts"`
	// DaemonExcludeNodes are the nodes to keep the daemon off (ExcludeUnsupportedNodes).
	DaemonExcludeNodes []string `json:"daemonExcludeNodes,omitempty"`
	// AdoptCRDs is set when some of the add-on's CRDs exist without a live Helm owner and nothing
	// else manages them: the install takes those over, and only those (CRDsToAdopt).
	AdoptCRDs bool `json:"adoptCRDs,omitempty"`
	// CRDsToAdopt names the CRDs the install gives this release's Helm ownership metadata
	// before it calls Helm, sorted.
	CRDsToAdopt []string `json:"crdsToAdopt,omitempty"`
}

// Refused reports whether any check refused.
func (r Report) Refused() bool {
	for _, v := range r.Verdicts {
		if v.Severity == Refused {
			return true
		}
	}
	return false
}

// Refusals returns the refused verdicts.
func (r Report) Refusals() []Verdict {
	var out []Verdict
	for _, v := range r.Verdicts {
		if v.Severity == Refused {
			out = append(out, v)
		}
	}
	return out
}

// Run runs every check.
func Run(in Input) Report {
	var r Report
	cv, v := ClusterVersion(in)
	r.Verdicts = append(r.Verdicts, v)
	fv, adopt := Foreign(in)
	r.Verdicts = append(r.Verdicts, fv...)
	r.AdoptCRDs, r.CRDsToAdopt = len(adopt) > 0, adopt
	if in.ConfigNamespace != "" {
		r.Verdicts = append(r.Verdicts, ConfigNamespace(in))
	}
	if cv != nil {
		rv, exclude := Runtime(in, *cv)
		r.Verdicts = append(r.Verdicts, rv)
		r.DaemonExcludeNodes = exclude
	}
	r.Verdicts = append(r.Verdicts, Placement(in))
	r.Verdicts = append(r.Verdicts, WebhookRisk(in)...)
	return r
}

// ClusterVersion checks the table supports the server version; it returns the parsed version
// when it parses.
func ClusterVersion(in Input) (*versions.ClusterVersion, Verdict) {
	v := Verdict{Check: CheckClusterVersion}
	cv, err := versions.ParseClusterVersion(in.Facts.ServerVersion)
	if err != nil {
		v.Severity, v.Message = Refused, err.Error()
		return nil, v
	}
	ok, _ := in.Table.Supported(in.AddonVersion, cv)
	v.Message = in.Table.Explain(in.AddonVersion, cv)
	if ok {
		v.Severity = OK
		return &cv, v
	}
	v.Severity = Refused
	if n, err := in.Table.NewestCompatible(cv); err == nil {
		v.Fix = fmt.Sprintf("install add-on %s, which supports %s, or upgrade the cluster", n.Addon, cv)
	} else {
		v.Fix = "upgrade the cluster to a supported version"
	}
	return &cv, v
}

// Foreign refuses when the add-on's objects belong to someone else: another Helm release of the
// kruise chart, a kruise-controller-manager our release does not own, or CRDs owned by another
// release. CRDs with no owner at all and nothing else running (left by a removed community
// install, or applied by hand) are adopted, with a warning: Foreign returns their names. Only the
// add-on's own CRDs (apis/kinds) are in the facts, so other products of the kruise API family
// are never foreign.
func Foreign(in Input) ([]Verdict, []string) {
	ours := func(o facts.Owner) bool { return o.Release == in.ReleaseName && o.Namespace == in.Namespace }
	var problems, fixes []string
	for _, rel := range in.Facts.Releases {
		if rel.Name == in.ReleaseName && rel.Namespace == in.Namespace {
			continue
		}
		problems = append(problems, fmt.Sprintf("Helm release %s/%s of chart kruise %s (%s)", rel.Namespace, rel.Name, rel.ChartVersion, rel.Status))
		fixes = append(fixes, fmt.Sprintf("helm uninstall %s -n %s", rel.Name, rel.Namespace))
	}
	for _, m := range in.Facts.Managers {
		if ours(m.Owner) {
			continue
		}
		if m.Owner.Release != "" {
			if _, listed := in.Facts.Release(m.Owner.Release, m.Owner.Namespace); listed {
				continue // already reported with its release
			}
		}
		problems = append(problems, fmt.Sprintf("Deployment %s/%s not installed by release %s/%s", m.Namespace, m.Name, in.Namespace, in.ReleaseName))
		fixes = append(fixes, fmt.Sprintf("kubectl delete deployment %s -n %s (and the rest of that installation)", m.Name, m.Namespace))
	}
	var otherOwned, unowned []string
	for _, c := range in.Facts.CRDs {
		switch {
		case ours(c.Owner):
		case c.Owner.Release == "":
			unowned = append(unowned, c.Name)
		case !releaseExists(in.Facts, c.Owner):
			// Kept by the keep policy after their release was uninstalled: left over, not foreign.
			unowned = append(unowned, c.Name)
		default:
			otherOwned = append(otherOwned, fmt.Sprintf("%s (release %s/%s)", c.Name, c.Owner.Namespace, c.Owner.Release))
		}
	}
	if len(otherOwned) > 0 {
		problems = append(problems, "CRDs owned by another release: "+strings.Join(otherOwned, ", "))
		fixes = append(fixes, "uninstall that release; its CRDs stay (kubectl delete crd <name> removes them and every object of that kind)")
	}
	if len(problems) > 0 {
		return []Verdict{{
			Check: CheckForeign, Severity: Refused,
			Message: "another installation of the kruise API is present: " + strings.Join(problems, "; "),
			Fix:     "remove it first: " + strings.Join(fixes, "; ") + "; the add-on serves the same API, so existing custom resources keep working once it is installed",
		}}, nil
	}
	if len(unowned) > 0 {
		sort.Strings(unowned)
		return []Verdict{{
			Check: CheckForeign, Severity: Warning,
			Message: fmt.Sprintf("%d kruise CRDs exist without a live Helm owner and no other manager runs; the install adopts them", len(unowned)),
		}}, unowned
	}
	return []Verdict{{Check: CheckForeign, Severity: OK, Message: "no other installation of the kruise API"}}, nil
}

// ConfigNamespace refuses a daemon config namespace the release would take from someone else.
// The chart creates that namespace and Helm deletes it, with everything in it, when the release
// goes; so it must be new, or created by this very release. A system namespace is refused
// outright: the manager may delete Secrets there and the daemon may read them. So is the install
// namespace: the daemon may read any Secret of its config namespace by name, and the install
// namespace holds the webhook's CA key.
func ConfigNamespace(in Input) Verdict {
	v := Verdict{Check: CheckConfigNamespace}
	name := in.ConfigNamespace
	fix := fmt.Sprintf("set %s to a namespace that does not exist yet (the default is kruise-daemon-config)", ConfigNamespaceValue)
	switch ns, exists := in.Facts.Namespace(name); {
	case IsSystemNamespace(name):
		v.Severity, v.Fix = Refused, fix
		v.Message = fmt.Sprintf("%s %q is a system namespace: the manager would manage Secrets there and the daemon read them", ConfigNamespaceValue, name)
	case name == in.Namespace:
		v.Severity, v.Fix = Refused, fix
		v.Message = InstallNamespaceMessage(name)
	case exists && ns.Terminating:
		v.Severity = Refused
		v.Message = fmt.Sprintf("the daemon config namespace %s is still being deleted (an earlier uninstall); the release cannot create it again until it is gone", name)
		v.Fix = fmt.Sprintf("wait until namespace %s is gone (kubectl wait --for=delete namespace/%s), then retry; a namespace that stays terminating waits for a finalizer of its objects", name, name)
	case !exists:
		v.Severity = OK
		v.Message = fmt.Sprintf("the release creates the daemon config namespace %s, and removes it on uninstall", name)
	case ns.Owner.Release == in.ReleaseName && ns.Owner.Namespace == in.Namespace:
		v.Severity = OK
		v.Message = fmt.Sprintf("the daemon config namespace %s was created by this release", name)
	default:
		v.Severity, v.Fix = Refused, fix
		owner := "no Helm release"
		if ns.Owner.Release != "" {
			owner = fmt.Sprintf("release %s/%s", ns.Owner.Namespace, ns.Owner.Release)
		}
		v.Message = fmt.Sprintf("%s %q names a namespace that exists and belongs to %s, not to release %s/%s: the release would take it over and delete it, with everything in it, on uninstall", ConfigNamespaceValue, name, owner, in.Namespace, in.ReleaseName)
	}
	return v
}

// InstallNamespaceMessage says why the install namespace cannot be the daemon config namespace.
func InstallNamespaceMessage(name string) string {
	return fmt.Sprintf("%s %q is the install namespace: the daemon may read any Secret of its config namespace, and there it could read the webhook's CA key (Secret kruise-webhook-certs)", ConfigNamespaceValue, name)
}

// Runtime checks the daemon can use every node's container runtime. Unsupported nodes are
// refused, or with ExcludeUnsupportedNodes returned for the daemon to stay off.
func Runtime(in Input, cv versions.ClusterVersion) (Verdict, []string) {
	v := Verdict{Check: CheckRuntime}
	reasons := map[string][]string{}
	var bad []string
	for _, n := range in.Facts.Nodes {
		ok, why := in.Table.RuntimeSupported(in.AddonVersion, cv, n.ContainerRuntimeVersion)
		if !ok {
			bad = append(bad, n.Name)
			reasons[why] = append(reasons[why], n.Name)
		}
	}
	if len(bad) == 0 {
		v.Severity, v.Message = OK, "the daemon supports every node's container runtime"
		return v, nil
	}
	sort.Strings(bad)
	var parts []string
	for why, nodes := range reasons {
		parts = append(parts, fmt.Sprintf("%s (nodes: %s)", why, summarize(nodes)))
	}
	sort.Strings(parts)
	v.Message = strings.Join(parts, "; ")
	if in.ExcludeUnsupportedNodes {
		v.Severity = Warning
		v.Message += fmt.Sprintf("; the daemon is kept off these %d node(s), so image pre-pull and container recreate do not work there", len(bad))
		return v, bad
	}
	v.Severity = Refused
	if n, err := in.Table.NewestCompatible(cv); err == nil && n.Addon != in.AddonVersion {
		v.Fix = fmt.Sprintf("install add-on %s, or pass --exclude-unsupported-nodes to keep the daemon off them", n.Addon)
	} else {
		v.Fix = "pass --exclude-unsupported-nodes to keep the daemon off them, or move the nodes to containerd"
	}
	return v, nil
}

// Placement checks the manager can be scheduled: some ready, schedulable node matches the node
// affinity and tolerates its taints, and the zone mode has enough zones.
func Placement(in Input) Verdict {
	v := Verdict{Check: CheckPlacement}
	p := in.Placement.Default(in.Spec.Replicas)
	var sel *nodeaffinity.NodeSelector
	if reqs := p.NodeRequirements(); len(reqs) > 0 {
		var err error
		sel, err = nodeaffinity.NewNodeSelector(&corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: reqs}}})
		if err != nil {
			v.Severity, v.Message = Refused, fmt.Sprintf("node affinity: %v", err)
			return v
		}
	}
	tolerations := p.ManagerTolerations()
	logger := klog.Background()
	hard := func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}
	matched, fit := 0, 0
	want, werr := managerRequests(in.Spec)
	if werr != nil {
		v.Severity, v.Message = Refused, werr.Error()
		return v
	}
	var roomy roomCount
	zones := map[string]int{}
	var untolerated []string
	for i := range in.Facts.Nodes {
		n := &in.Facts.Nodes[i]
		if sel != nil && !sel.Match(&corev1.Node{ObjectMeta: objectMeta(n)}) {
			continue
		}
		matched++
		if !n.Ready || !n.Schedulable {
			continue
		}
		if t, bad := corev1helpers.FindMatchingUntoleratedTaint(logger, n.Taints, tolerations, hard, false); bad {
			if len(untolerated) < 3 {
				untolerated = append(untolerated, fmt.Sprintf("%s (%s=%s:%s)", n.Name, t.Key, t.Value, t.Effect))
			}
			continue
		}
		fit++
		roomy.add(n, in.Namespace, want, int(in.Spec.Replicas))
		if n.Zone != "" {
			zones[n.Zone]++
		}
	}
	switch {
	case len(in.Facts.Nodes) == 0:
		v.Severity = Refused
		if !in.Wait {
			v.Severity = Warning
		}
		v.Message = "the cluster has no nodes: the manager and the daemon stay Pending until nodes join"
		v.Fix = "add nodes, or install with --wait=false to apply now"
		return v
	case matched == 0 && sel != nil:
		v.Severity = Refused
		v.Message = fmt.Sprintf("no node matches the node affinity %s", describeReqs(p.NodeRequirements()))
		v.Fix = "check the node names, pool label and values, or selector"
		return v
	case fit == 0:
		v.Severity = Refused
		v.Message = fmt.Sprintf("%d node(s) match but none is ready, schedulable and tolerated", matched)
		if len(untolerated) > 0 {
			v.Message += "; untolerated taints on " + strings.Join(untolerated, ", ")
		}
		v.Fix = "add --toleration for those taints, or choose other nodes"
		return v
	}
	replicas := int(in.Spec.Replicas)
	if roomy.replicas < replicas {
		v.Severity = Refused
		if !in.Wait {
			v.Severity = Warning
		}
		v.Message = fmt.Sprintf("the manager requests %s per replica, and the %d eligible node(s) have room for %d of its %d replica(s): "+
			"the roomiest, %s, has %s free (allocatable minus the requests of the pods on it)",
			describeResources(want), fit, roomy.replicas, replicas, roomy.best, describeResources(roomy.bestRoom))
		v.Fix = "free or add capacity on those nodes, choose other nodes, or lower the requests (--spec custom with --cpu-request and --memory-request)"
		return v
	}
	switch p.ZoneMode {
	case placement.ZoneRequired:
		if len(zones) < replicas {
			v.Severity = Refused
			v.Message = fmt.Sprintf("zone mode required puts at most one of %d replicas per zone, but only %d zone(s) have nodes that can run the manager (%s)", replicas, len(zones), zoneList(zones))
			v.Fix = fmt.Sprintf("use --zone-mode preferred or even, or at most %d replica(s)", len(zones))
			return v
		}
	case placement.ZoneEven, placement.ZonePreferred:
		if len(zones) == 0 {
			v.Severity = Refused
			if p.ZoneMode == placement.ZonePreferred {
				v.Severity = Warning
			}
			v.Message = fmt.Sprintf("zone mode %s, but no eligible node has the %s label", p.ZoneMode, placement.ZoneLabel)
			v.Fix = "label the nodes with their zones or use --zone-mode none"
			return v
		}
		if len(zones) == 1 && replicas > 1 {
			v.Severity = Warning
			v.Message = fmt.Sprintf("zone mode %s, but every eligible node is in zone %s: a zone outage stops every replica", p.ZoneMode, zoneList(zones))
			if p.ZoneMode == placement.ZonePreferred {
				v.Message += "; the replicas are spread over different nodes of that zone instead"
			}
			return v
		}
	}
	v.Severity = OK
	v.Message = fmt.Sprintf("%d node(s) can run the manager, in %d zone(s); zone mode %s", fit, len(zones), p.ZoneMode)
	return v
}

// managerRequests is the cpu and memory one manager replica requests.
func managerRequests(s spec.Spec) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for name, v := range map[corev1.ResourceName]string{corev1.ResourceCPU: s.Resources.RequestsCPU, corev1.ResourceMemory: s.Resources.RequestsMemory} {
		if v == "" {
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("manager %s request %q: %w", name, v, err)
		}
		out[name] = q
	}
	return out, nil
}

// roomCount adds up how many manager replicas the eligible nodes have room for, and which node
// has the most.
type roomCount struct {
	replicas int
	best     string
	bestFits int
	bestRoom corev1.ResourceList
}

// add counts n: its room is its allocatable minus the requests of its pods, where the manager
// pods of namespace (which an upgrade replaces) do not count. A node that reports no
// allocatable for a resource is not limited by it.
func (c *roomCount) add(n *facts.Node, namespace string, want corev1.ResourceList, replicas int) {
	room := corev1.ResourceList{}
	fits := replicas
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		alloc, ok := n.Allocatable[name]
		if !ok {
			continue
		}
		free := alloc.DeepCopy()
		used := n.Requested[name]
		free.Sub(used)
		if own, ok := n.ManagerRequested[namespace][name]; ok {
			free.Add(own)
		}
		room[name] = free
		req, ok := want[name]
		if !ok || req.IsZero() {
			continue
		}
		k := 0
		if free.Sign() > 0 {
			k = int(free.MilliValue() / req.MilliValue())
		}
		fits = min(fits, k)
	}
	c.replicas += fits
	if c.best == "" || fits > c.bestFits || (fits == c.bestFits && room.Cpu().Cmp(*c.bestRoom.Cpu()) > 0) {
		c.best, c.bestFits, c.bestRoom = n.Name, fits, room
	}
}

// describeResources renders "cpu 500m, memory 1Gi".
func describeResources(l corev1.ResourceList) string {
	var parts []string
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := l[name]; ok {
			parts = append(parts, fmt.Sprintf("%s %s", name, q.String()))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// WebhookRisk warns about a single replica, an outgrown small spec and a pod webhook that fails
// closed.
func WebhookRisk(in Input) []Verdict {
	var out []Verdict
	for _, w := range spec.Warnings(in.Spec, in.Facts.NodeCount()) {
		out = append(out, Verdict{Check: CheckWebhookRisk, Severity: Warning, Message: w})
	}
	if in.PodFailurePolicy == "Fail" {
		out = append(out, Verdict{
			Check: CheckWebhookRisk, Severity: Warning,
			Message: "the pod webhooks fail closed: while the manager is down no pod can be created in any selected namespace",
			Fix:     "keep webhookConfiguration.failurePolicy.pods=Ignore unless the add-on's pod features must never be skipped",
		})
	}
	if len(out) == 0 {
		out = append(out, Verdict{Check: CheckWebhookRisk, Severity: OK, Message: fmt.Sprintf("%d manager replicas; pod webhooks fail open", in.Spec.Replicas)})
	}
	return out
}

func releaseExists(f facts.Facts, o facts.Owner) bool {
	_, ok := f.Release(o.Release, o.Namespace)
	return ok
}

func objectMeta(n *facts.Node) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: n.Name, Labels: n.Labels}
}

func describeReqs(reqs []corev1.NodeSelectorRequirement) string {
	var parts []string
	for _, r := range reqs {
		parts = append(parts, fmt.Sprintf("%s %s %v", r.Key, r.Operator, r.Values))
	}
	return strings.Join(parts, ", ")
}

func zoneList(zones map[string]int) string {
	var names []string
	for z := range zones {
		names = append(names, z)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func summarize(names []string) string {
	sort.Strings(names)
	if len(names) <= 5 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:5], ", "), len(names)-5)
}
