package framework

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Env is a running etcd + kube-apiserver with the add-on's CRDs installed.
type Env struct {
	// Config reaches the apiserver as a system:masters user.
	Config *rest.Config
	// Client is an uncached controller-runtime client using Scheme.
	Client client.Client
	// Scheme holds the client-go and apiextensions kinds plus whatever the options added.
	Scheme *runtime.Scheme
	// Clientset is a client-go clientset for the same user.
	Clientset kubernetes.Interface
	// Kubeconfig is the path of a kubeconfig file for kubectl and helm.
	Kubeconfig string
	// Dir holds the certificates, etcd's data and the logs (etcd.log, kube-apiserver.log);
	// Stop removes it.
	Dir string

	assets assets
	logger logr.Logger

	mu      sync.Mutex
	procs   []*process // in start order
	stopped bool
}

// workDirPrefix names the work dirs; the owner's pid follows it, so that a later Start can
// remove dirs whose owner died without calling Stop.
const workDirPrefix = "kruise-cp-"

const (
	pollInterval = 50 * time.Millisecond
	// stopGrace is how long a process may take to exit on SIGTERM before it is killed.
	stopGrace = 5 * time.Second
	// startAttempts covers the rare case of another process taking a port we picked between
	// our check and the child's bind.
	startAttempts = 3
)

var errPortTaken = errors.New("port already in use")

// Start runs etcd and kube-apiserver on loopback, installs every CRD in CRDDir() and the
// option's extra dirs, and waits until each is Established and served. Call Stop when done;
// the processes also die with the test binary if it never gets there.
func Start(opts ...Option) (*Env, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	a, err := findAssets(o.assetsDir)
	if err != nil {
		return nil, err
	}
	scheme, err := buildScheme(o)
	if err != nil {
		return nil, err
	}
	removeStaleWorkDirs(o.logger)

	ctx, cancel := context.WithTimeout(context.Background(), o.startTimeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		e, err := start(ctx, a, scheme, o)
		if err == nil {
			return e, nil
		}
		if !errors.Is(err, errPortTaken) || attempt == startAttempts {
			return nil, err
		}
		o.logger.Info("retrying the control plane on other ports", "attempt", attempt, "err", err)
	}
}

func buildScheme(o options) (*runtime.Scheme, error) {
	s := o.scheme
	if s == nil {
		s = runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(s); err != nil {
			return nil, fmt.Errorf("add client-go kinds: %w", err)
		}
		if err := apiextensionsv1.AddToScheme(s); err != nil {
			return nil, fmt.Errorf("add apiextensions kinds: %w", err)
		}
	}
	for _, add := range o.schemeAdders {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("add kinds to scheme: %w", err)
		}
	}
	return s, nil
}

func start(ctx context.Context, a assets, scheme *runtime.Scheme, o options) (_ *Env, err error) {
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", workDirPrefix, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("create work dir: %w", err)
	}
	e := &Env{Dir: dir, Scheme: scheme, assets: a, logger: o.logger}
	defer func() {
		if err != nil {
			if stopErr := e.Stop(); stopErr != nil {
				err = errors.Join(err, stopErr)
			}
		}
	}()

	pkiDir := filepath.Join(dir, "pki")
	if err := os.Mkdir(pkiDir, 0o700); err != nil {
		return nil, fmt.Errorf("create pki dir: %w", err)
	}
	certs, err := newPKI(pkiDir)
	if err != nil {
		return nil, err
	}
	ports, err := FreePorts(3)
	if err != nil {
		return nil, err
	}
	etcdPort, peerPort, apiPort := ports[0], ports[1], ports[2]

	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	etcd, err := e.startProcess("etcd", a.etcd, []string{
		"--name=test", "--data-dir=" + filepath.Join(dir, "etcd-data"),
		"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=test=" + peerURL,
		// The data dies with the test; fsync would only slow every write down.
		"--unsafe-no-fsync", "--log-level=warn",
	})
	if err != nil {
		return nil, err
	}
	if err := waitForEtcd(ctx, etcd, etcdURL); err != nil {
		return nil, err
	}
	o.logger.Info("etcd is healthy", "url", etcdURL, "pid", etcd.pid())

	host := "https://127.0.0.1:" + strconv.Itoa(apiPort)
	apiserver, err := e.startProcess("kube-apiserver", a.apiserver, apiserverArgs(map[string]string{
		"etcd-servers":      etcdURL,
		"bind-address":      "127.0.0.1",
		"secure-port":       strconv.Itoa(apiPort),
		"advertise-address": "127.0.0.1",
		// The endpoint reconciler refuses a loopback advertise address.
		"endpoint-reconciler-type":         "none",
		"service-cluster-ip-range":         "10.0.0.0/24",
		"tls-cert-file":                    certs.servingCertFile,
		"tls-private-key-file":             certs.servingKeyFile,
		"cert-dir":                         filepath.Join(dir, "apiserver-certs"),
		"client-ca-file":                   certs.caCertFile,
		"authorization-mode":               "RBAC",
		"service-account-issuer":           host,
		"service-account-key-file":         certs.saPubFile,
		"service-account-signing-key-file": certs.saKeyFile,
		// No controller-manager creates ServiceAccounts here, so pods could not be admitted.
		"disable-admission-plugins": "ServiceAccount",
		"allow-privileged":          "true",
	}, o.apiserverFlags))
	if err != nil {
		return nil, err
	}

	e.Config = &rest.Config{
		Host: host,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   certs.caPEM,
			CertData: certs.adminCertPEM,
			KeyData:  certs.adminKeyPEM,
		},
		// client-go's default of 5 QPS would make the tests wait on the client, not the server.
		QPS:   500,
		Burst: 1000,
	}
	if e.Clientset, err = kubernetes.NewForConfig(e.Config); err != nil {
		return nil, fmt.Errorf("create clientset: %w", err)
	}
	if err := waitForAPIServer(ctx, apiserver, e.Clientset); err != nil {
		return nil, err
	}
	o.logger.Info("kube-apiserver is ready", "host", host, "pid", apiserver.pid())

	e.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(e.Kubeconfig, host, certs); err != nil {
		return nil, err
	}
	if e.Client, err = client.New(e.Config, client.Options{Scheme: scheme}); err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	dirs := append([]string{CRDDir()}, o.crdDirs...)
	n, err := installCRDs(ctx, e.Client, e.Clientset, dirs, len(o.crdDirs) > 0)
	if err != nil {
		return nil, err
	}
	o.logger.Info("control plane started", "dir", dir, "crds", n)
	return e, nil
}

// startProcess starts a binary and records it, so that Stop ends it even if Start fails later.
func (e *Env) startProcess(name, bin string, args []string) (*process, error) {
	p, err := startProcess(name, bin, args, filepath.Join(e.Dir, name+".log"))
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.procs = append(e.procs, p)
	e.mu.Unlock()
	return p, nil
}

// PIDs returns the process ids of the control plane's processes by name (etcd, kube-apiserver),
// for a benchmark that reads how much CPU each used from /proc.
func (e *Env) PIDs() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]int{}
	for _, p := range e.procs {
		out[p.name] = p.pid()
	}
	return out
}

// Stop ends kube-apiserver and etcd, waits until both have exited and removes Dir. It is safe
// to call more than once.
func (e *Env) Stop() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return nil
	}
	e.stopped = true
	var errs []error
	// The apiserver first: stopping etcd under it only makes it log connection errors.
	for i := len(e.procs) - 1; i >= 0; i-- {
		if err := e.procs[i].stop(stopGrace); err != nil {
			errs = append(errs, err)
		}
	}
	if e.Dir != "" {
		if err := os.RemoveAll(e.Dir); err != nil {
			errs = append(errs, fmt.Errorf("remove work dir: %w", err))
		}
	}
	return errors.Join(errs...)
}

// apiserverArgs merges overrides into the defaults and renders them in a stable order.
func apiserverArgs(defaults, overrides map[string]string) []string {
	flags := map[string]string{}
	for k, v := range defaults {
		flags[k] = v
	}
	for k, v := range overrides {
		flags[strings.TrimLeft(k, "-")] = v
	}
	names := make([]string, 0, len(flags))
	for k, v := range flags {
		if v != "" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	args := make([]string, 0, len(names))
	for _, k := range names {
		args = append(args, "--"+k+"="+flags[k])
	}
	return args
}

// FreePorts asks the kernel for n unused loopback ports.
func FreePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// startupFailure explains a process that exited while we waited for it.
func startupFailure(p *process) error {
	err := p.exitError()
	if strings.Contains(p.logTail(50), "address already in use") {
		return fmt.Errorf("%w: %w", errPortTaken, err)
	}
	return err
}

func waitForEtcd(ctx context.Context, etcd *process, url string) error {
	if err := pollHealth(ctx, etcd, &http.Client{Timeout: time.Second}, url+"/health"); err != nil {
		return fmt.Errorf("wait for etcd: %w", err)
	}
	return nil
}

// pollHealth asks url with hc until it answers 200 OK, and fails at once when p exits. Its
// error carries the last answer or failure.
func pollHealth(ctx context.Context, p *process, hc *http.Client, url string) error {
	var last error
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		if !p.running() {
			return false, startupFailure(p)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			last = err
			return false, nil
		}
		_ = resp.Body.Close()
		last = fmt.Errorf("%s answered %s", url, resp.Status)
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("%w (last: %v)", err, last)
	}
	return nil
}

// waitForAPIServer waits for /readyz and for the default namespace, which the apiserver
// creates shortly after it becomes ready and which most tests assume.
func waitForAPIServer(ctx context.Context, apiserver *process, cs kubernetes.Interface) error {
	var last error
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		if !apiserver.running() {
			return false, startupFailure(apiserver)
		}
		if _, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err != nil {
			last = err
			return false, nil
		}
		if _, err := cs.CoreV1().Namespaces().Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{}); err != nil {
			last = err
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		if apiserver.running() {
			return fmt.Errorf("wait for kube-apiserver: %w (last: %v); last lines of %s:\n%s", err, last, apiserver.logPath, apiserver.logTail(20))
		}
		return fmt.Errorf("wait for kube-apiserver: %w", err)
	}
	return nil
}

func writeKubeconfig(path, host string, certs *pki) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["kruise-test"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: certs.caPEM}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: certs.adminCertPEM, ClientKeyData: certs.adminKeyPEM}
	kc.Contexts["kruise-test"] = &clientcmdapi.Context{Cluster: "kruise-test", AuthInfo: "admin"}
	kc.CurrentContext = "kruise-test"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}

// removeStaleWorkDirs deletes work dirs left by test binaries that died without Stop. Their
// processes are already gone (parent-death signal); only the files remain.
func removeStaleWorkDirs(logger logr.Logger) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), workDirPrefix+"*"))
	for _, d := range dirs {
		rest := strings.TrimPrefix(filepath.Base(d), workDirPrefix)
		pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			logger.Info("removing a work dir whose owner is gone", "dir", d, "pid", pid)
			_ = os.RemoveAll(d)
		}
	}
}
