package manager

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/features/featurestest"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// flagView is the part of Options the flags set, compared as a whole.
type flagView struct {
	LeaderElection          bool
	LeaderElectionNamespace string
	LeaseNamespace          string
	LeaseDuration           time.Duration
	RenewDeadline           time.Duration
	RetryPeriod             time.Duration
	Namespace               string
	MetricsAddr             string
	HealthProbeAddr         string
	SyncPeriod              time.Duration
	QPS                     float32
	Burst                   int
	CloneSetWorkers         int
	PodReadinessWorkers     int
	WebhookPort             int
	WebhookHost             string
	WebhookCertDir          string
	PodWebhook              bool
	ImagePullJobGate        bool
	DaemonConfigNamespace   string
	Pprof                   string
	// The three safety options, as the kind packages get them.
	DistributionCheckAuthorRights         bool
	DistributionExcludedNamespaces        []string
	DeletionAllowedInTerminatingNamespace bool
	CloneSetScalingExcludePreparingDelete bool
}

func view(o *Options) flagView {
	return flagView{
		LeaderElection: o.EnableLeaderElection, LeaderElectionNamespace: o.LeaderElectionNamespace,
		LeaseNamespace: o.leaderElectionNamespace(), Namespace: o.Namespace,
		LeaseDuration: o.LeaseDuration, RenewDeadline: o.RenewDeadline, RetryPeriod: o.RetryPeriod,
		MetricsAddr: o.MetricsAddr, HealthProbeAddr: o.HealthProbeAddr, SyncPeriod: o.SyncPeriod,
		QPS: o.QPS, Burst: o.Burst, CloneSetWorkers: o.workers("cloneset"), PodReadinessWorkers: o.workers("podreadiness"),
		WebhookPort: o.WebhookPort, WebhookHost: o.WebhookHost, WebhookCertDir: o.WebhookCertDir,
		PodWebhook: o.Gates.Enabled(features.PodWebhook), ImagePullJobGate: o.Gates.Enabled(features.ImagePullJobGate),
		DaemonConfigNamespace: o.DaemonConfigNamespace, Pprof: o.pprofAddr(),
		DistributionCheckAuthorRights:         o.deps().DistributionCheckAuthorRights,
		DistributionExcludedNamespaces:        o.deps().DistributionExcludedNamespaces,
		DeletionAllowedInTerminatingNamespace: o.deps().DeletionAllowedInTerminatingNamespace,
		CloneSetScalingExcludePreparingDelete: o.deps().CloneSetScalingExcludePreparingDelete,
	}
}

func defaults() flagView {
	return flagView{
		LeaderElection: true, LeaseNamespace: "kruise-system", MetricsAddr: ":8080", HealthProbeAddr: ":8000",
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		QPS: 30, Burst: 50, CloneSetWorkers: 3, PodReadinessWorkers: 10, WebhookPort: 9876, WebhookCertDir: "/tmp/kruise-webhook-certs",
		PodWebhook: true, DaemonConfigNamespace: "kruise-daemon-config", Pprof: "127.0.0.1:8090",
	}
}

// parsed is the Options that args give, with the CloneSet workers registered as the manager's
// controllers register theirs.
func parsed(t *testing.T, args []string) *Options {
	t.Helper()
	o := NewOptions()
	o.Workers["cloneset"] = DefaultWorkers
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestFlags(t *testing.T) {
	type tcase struct {
		env  string
		args []string
		want func(v *flagView)
	}
	cases := map[string]tcase{
		"no flags give the contract's defaults": {want: func(*flagView) {}},
		"--enable-pprof=false turns the profiles off": {
			args: []string{"--enable-pprof=false"}, want: func(v *flagView) { v.Pprof = "0" },
		},
		"POD_NAMESPACE is the Lease's namespace by default": {
			env: "addons", want: func(v *flagView) { v.LeaseNamespace = "addons" },
		},
		"every flag of the contract is read": {
			args: []string{
				"--enable-leader-election=false", "--leader-election-namespace=le", "--namespace=apps",
				"--leader-election-lease-duration=8s", "--leader-election-renew-deadline=6s", "--leader-election-retry-period=1s",
				"--metrics-addr=:9090", "--health-probe-addr=:9091", "--sync-period=5m",
				"--rest-config-qps=100", "--rest-config-burst=200", "--cloneset-workers=7", "--podreadiness-workers=4",
				"--webhook-port=9443", "--webhook-host=127.0.0.1", "--webhook-cert-dir=/certs",
				"--feature-gates=PodWebhook=false,ImagePullJobGate=true", "-v=4",
				"--daemon-config-namespace=pull-config", "--enable-pprof=true", "--pprof-addr=:8091",
				"--resourcedistribution-check-author-rights", "--resourcedistribution-excluded-namespaces=kube-system,kube-public",
				"--deletion-protection-allow-in-terminating-namespace", "--cloneset-scaling-exclude-preparing-delete",
			},
			want: func(v *flagView) {
				*v = flagView{
					LeaderElection: false, LeaderElectionNamespace: "le", LeaseNamespace: "le", Namespace: "apps",
					LeaseDuration: 8 * time.Second, RenewDeadline: 6 * time.Second, RetryPeriod: time.Second,
					MetricsAddr: ":9090", HealthProbeAddr: ":9091", SyncPeriod: 5 * time.Minute,
					QPS: 100, Burst: 200, CloneSetWorkers: 7, PodReadinessWorkers: 4, WebhookPort: 9443, WebhookHost: "127.0.0.1",
					WebhookCertDir: "/certs", PodWebhook: false, ImagePullJobGate: true,
					DaemonConfigNamespace: "pull-config", Pprof: ":8091",
					DistributionCheckAuthorRights: true, DistributionExcludedNamespaces: []string{"kube-system", "kube-public"},
					DeletionAllowedInTerminatingNamespace: true, CloneSetScalingExcludePreparingDelete: true,
				}
			},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		t.Setenv("POD_NAMESPACE", tc.env)
		o := parsed(t, tc.args)
		want := defaults()
		tc.want(&want)
		testkit.Diff(t, "options", want, view(o))
		if err := o.Validate(); err != nil {
			t.Errorf("Validate() = %v, want nil", err)
		}
	})
}

func TestHiddenFlags(t *testing.T) {
	o := NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--webhook-cert-validity=2h", "--webhook-cert-renew-before=1h", "--webhook-bind-address=127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	got := []any{o.CertPolicy.Validity, o.CertPolicy.RenewBefore, o.WebhookBindAddress}
	if diff := cmp.Diff([]any{2 * time.Hour, time.Hour, "127.0.0.1"}, got); diff != "" {
		t.Errorf("hidden flags (-want +got):\n%s", diff)
	}
	for _, name := range []string{"webhook-cert-validity", "webhook-cert-renew-before", "webhook-bind-address"} {
		if !fs.Lookup(name).Hidden {
			t.Errorf("--%s is not hidden", name)
		}
	}
}

func TestValidate(t *testing.T) {
	type tcase struct {
		args    []string
		mutate  func(*Options)
		wantErr []string
	}
	cases := map[string]tcase{
		"a port out of range": {args: []string{"--webhook-port=70000"}, wantErr: []string{"--webhook-port 70000 is not a port"}},
		"a host with a scheme": {
			args: []string{"--webhook-host=https://x"}, wantErr: []string{"--webhook-host \"https://x\" must be a host name"},
		},
		"an IPv6 host is fine":                              {args: []string{"--webhook-host=::1"}},
		"zero workers":                                      {args: []string{"--cloneset-workers=0"}, wantErr: []string{"--cloneset-workers 0 must be at least 1"}},
		"a bad metrics address":                             {args: []string{"--metrics-addr=8080"}, wantErr: []string{"--metrics-addr \"8080\" is not host:port"}},
		"metrics turned off is fine":                        {args: []string{"--metrics-addr=0"}},
		"a bad pprof address":                               {args: []string{"--pprof-addr=8090"}, wantErr: []string{"--pprof-addr \"8090\" is not host:port"}},
		"a bad pprof address with the profiles off is fine": {args: []string{"--pprof-addr=8090", "--enable-pprof=false"}},
		"zero qps and burst together":                       {args: []string{"--rest-config-qps=0", "--rest-config-burst=0"}, wantErr: []string{"--rest-config-qps 0", "--rest-config-burst 0"}},
		"a renewal margin longer than the validity": {
			args:    []string{"--webhook-cert-validity=1h", "--webhook-cert-renew-before=2h"},
			wantErr: []string{"renewal margin 2h0m0s must be shorter than the serving certificate validity 1h0m0s"},
		},
		"leader election timings out of order": {
			mutate:  func(o *Options) { o.RenewDeadline = o.LeaseDuration },
			wantErr: []string{"--leader-election-lease-duration (15s) > --leader-election-renew-deadline (15s)"},
		},
		"leader election timings do not matter without leader election": {
			args: []string{"--enable-leader-election=false"}, mutate: func(o *Options) { o.RenewDeadline = o.LeaseDuration },
		},
		"an empty cert dir": {args: []string{"--webhook-cert-dir="}, wantErr: []string{"--webhook-cert-dir must not be empty"}},
		"a daemon config namespace that is no namespace name": {
			args: []string{"--daemon-config-namespace=Pull_Config"}, wantErr: []string{`--daemon-config-namespace "Pull_Config" must be a namespace name`},
		},
		"every 1.8 gate turned on is accepted": {args: []string{"--feature-gates=" + featurestest.AllOn()}},
		"an excluded namespace that is no namespace name": {
			args: []string{"--resourcedistribution-excluded-namespaces=kube-system,Kube_Public"}, wantErr: []string{`--resourcedistribution-excluded-namespaces "Kube_Public" must be a namespace name`},
		},
		"an empty daemon config namespace": {
			args: []string{"--daemon-config-namespace="}, wantErr: []string{`--daemon-config-namespace "" must be a namespace name`},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		o := parsed(t, tc.args)
		if tc.mutate != nil {
			tc.mutate(o)
		}
		err := o.Validate()
		if len(tc.wantErr) == 0 {
			if err != nil {
				t.Errorf("Validate() = %v, want nil", err)
			}
			return
		}
		if err == nil {
			t.Fatalf("Validate() = nil, want %q", tc.wantErr)
		}
		for _, want := range tc.wantErr {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Validate() = %q, want it to say %q", err, want)
			}
		}
	})
}

func TestTheCacheDropsManagedFields(t *testing.T) {
	o := NewOptions()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}}}
	out, err := o.cacheOptions().DefaultTransform(pod)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*corev1.Pod); len(got.ManagedFields) != 0 || got.Name != "p" {
		t.Errorf("cached pod = %+v, want its name kept and no managedFields", got.ObjectMeta)
	}
}

// TestChartWorkersKindsAreTheManagersFlags keeps the chart's manager.workers kinds and the
// manager's --<kind>-workers flags the same set: the chart renders one flag per kind, and the
// manager refuses to start on a flag it does not know.
func TestChartWorkersKindsAreTheManagersFlags(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "charts", "kruise", "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Manager struct {
				Properties struct {
					Workers struct {
						Properties           map[string]json.RawMessage `json:"properties"`
						AdditionalProperties json.RawMessage            `json:"additionalProperties"`
					} `json:"workers"`
				} `json:"properties"`
			} `json:"manager"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatalf("values.schema.json: %v", err)
	}
	workers := schema.Properties.Manager.Properties.Workers
	if string(workers.AdditionalProperties) != "false" {
		t.Error("manager.workers must refuse kinds it does not list (additionalProperties: false)")
	}
	var chartKinds []string
	for k := range workers.Properties {
		chartKinds = append(chartKinds, k)
	}
	sort.Strings(chartKinds)

	fs := pflag.NewFlagSet("kruise-manager", pflag.ContinueOnError)
	NewOptions().AddFlags(fs)
	var flagKinds []string
	fs.VisitAll(func(f *pflag.Flag) {
		if kind, ok := strings.CutSuffix(f.Name, "-workers"); ok {
			flagKinds = append(flagKinds, kind)
		}
	})
	sort.Strings(flagKinds)
	if d := cmp.Diff(flagKinds, chartKinds); d != "" {
		t.Errorf("manager.workers kinds in values.schema.json (-manager's --<kind>-workers flags +schema):\n%s", d)
	}
}

func TestFlagBind(t *testing.T) {
	var (
		s  = "a"
		b  = true
		n  = 1
		q  = float32(1.5)
		d  = time.Second
		ss = []string{"x"}
	)
	rows := []flagRow{
		{"s", &s, "a string", false}, {"b", &b, "a bool", false}, {"n", &n, "an int", true},
		{"q", &q, "a float", false}, {"d", &d, "a duration", false}, {"ss", &ss, "a list", false},
	}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	for _, f := range rows {
		f.bind(fs)
	}
	t.Run("each row's option is its flag's default", func(t *testing.T) {
		got := map[string]string{}
		fs.VisitAll(func(f *pflag.Flag) { got[f.Name] = f.DefValue })
		want := map[string]string{"s": "a", "b": "true", "n": "1", "q": "1.5", "d": "1s", "ss": "[x]"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("defaults (-want +got):\n%s", diff)
		}
	})
	t.Run("a parsed flag sets the option its row points to", func(t *testing.T) {
		if err := fs.Parse([]string{"--s=z", "--b=false", "--n=2", "--q=2.5", "--d=1m", "--ss=y,w"}); err != nil {
			t.Fatal(err)
		}
		got := []any{s, b, n, q, d, ss}
		if diff := cmp.Diff([]any{"z", false, 2, float32(2.5), time.Minute, []string{"y", "w"}}, got); diff != "" {
			t.Errorf("options (-want +got):\n%s", diff)
		}
	})
	t.Run("a hidden row's flag is hidden, the others are not", func(t *testing.T) {
		for _, f := range rows {
			if got := fs.Lookup(f.name).Hidden; got != f.hidden {
				t.Errorf("--%s hidden = %v, want %v", f.name, got, f.hidden)
			}
		}
	})
	t.Run("an option of a type no flag reads is a programming error naming the flag", func(t *testing.T) {
		defer func() {
			if r := recover(); r == nil || !cmp.Equal(r, "flag --u: options of type *uint have no flag") {
				t.Errorf("recover() = %v", r)
			}
		}()
		u := uint(1)
		flagRow{"u", &u, "", false}.bind(pflag.NewFlagSet("u", pflag.ContinueOnError))
	})
}
