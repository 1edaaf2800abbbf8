package bench

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/daemon/cri"
)

// benchPullImages is how many small images each side pulls; benchPullWorkers how many pulls
// run at once on each side (the daemon's --max-workers-for-pull-image).
const (
	benchPullImages  = 20
	benchPullWorkers = 2
)

// BenchmarkDaemonPull20 runs kruise-daemon as its own process on a private containerd and
// measures it pulling 20 small images from a loopback registry through one NodeImage, until
// every tag reports Succeeded. Baseline, in the same run: 20 other images of the same size
// pulled by direct CRI PullImage calls (what crictl pull does) with the same concurrency, once
// before the daemon and once after it (20 more images); the ratio is against their mean, since
// the load of a shared machine drifts during a run.
// The clock starts when the tags are added to a NodeImage the daemon already answers (as the
// manager's NodeImage exists before any pull job), so the daemon's start-up is printed apart.
// It prints where the time went (from containerd's log and a watch on the NodeImage: pick-up,
// pulls, last pull to Succeeded), the status writes and nodeimages requests, the CPU each
// process used, and the daemon's peak RSS.
func BenchmarkDaemonPull20(b *testing.B) {
	runScenario(b, runDaemonScenario)
}

func runDaemonScenario(b *testing.B) ([]string, error) {
	ctx := context.Background()
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	host := strings.TrimPrefix(reg.URL, "http://")
	// Images 0-19 are the baseline pulled before the daemon, 20-39 the daemon's, 40-59 the
	// baseline pulled again after it: the machine's load drifts, so the daemon is compared with
	// the mean of the two baselines around it.
	var direct, viaDaemon, directAfter []string
	for i := 0; i < 3*benchPullImages; i++ {
		img, err := random.Image(64*1024, 2)
		if err != nil {
			return nil, err
		}
		ref := fmt.Sprintf("%s/bench/img-%02d:v1", host, i)
		tag, err := name.NewTag(ref, name.Insecure)
		if err != nil {
			return nil, err
		}
		if err := remote.Write(tag, img); err != nil {
			return nil, fmt.Errorf("push %s: %w", ref, err)
		}
		switch i / benchPullImages {
		case 0:
			direct = append(direct, ref)
		case 1:
			viaDaemon = append(viaDaemon, ref)
		default:
			directAfter = append(directAfter, ref)
		}
	}
	pause, err := random.Image(1024, 1)
	if err != nil {
		return nil, err
	}
	if err := remote.Write(mustTag(host+"/pause:latest"), pause); err != nil {
		return nil, err
	}

	base, err := os.MkdirTemp("/tmp", "kdb-")
	if err != nil {
		return nil, err
	}
	start := exec.Command("../../scripts/containerd/start.sh")
	start.Env = append(os.Environ(), "BASE="+base, "REGISTRY="+host)
	if out, err := start.CombinedOutput(); err != nil {
		_ = os.RemoveAll(base)
		return nil, fmt.Errorf("start containerd: %w\n%s", err, out)
	}
	defer func() {
		stop := exec.Command("../../scripts/containerd/stop.sh")
		stop.Env = append(os.Environ(), "BASE="+base)
		_ = stop.Run()
	}()
	rt, err := cri.Dial(ctx, "containerd", filepath.Join(base, "containerd.sock"))
	if err != nil {
		return nil, err
	}
	defer rt.Close()

	// Baseline: direct CRI pulls, benchPullWorkers at a time.
	pids := map[string]int{"containerd": pidFromFile(filepath.Join(base, "containerd.pid")), "kube-apiserver": env.PIDs()["kube-apiserver"], "etcd": env.PIDs()["etcd"]}
	baseCPU := newCPUMeter(pids)
	t0 := time.Now()
	if err := pullDirect(ctx, rt, direct); err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	before := time.Since(t0)
	baseUsed, _ := baseCPU.used()

	d, err := startDaemonProcess(ctx, b.TempDir(), base)
	if err != nil {
		return nil, err
	}
	defer d.stop()
	// The daemon is ready once it answers its node's NodeImage, which the manager creates empty
	// for every node: its start-up is not part of the pull path measured below.
	sw, err := watchNodeImage(ctx, benchNode)
	if err != nil {
		return nil, err
	}
	defer sw.stop()
	t0 = time.Now()
	ni := &appsv1alpha1.NodeImage{ObjectMeta: metav1.ObjectMeta{Name: benchNode}}
	if err := env.Client.Create(ctx, ni); err != nil {
		return nil, err
	}
	if err := sw.waitFor(ctx, time.Minute, func(st appsv1alpha1.NodeImageStatus) (bool, error) { return st.FirstSyncStatus != nil, nil }); err != nil {
		return nil, fmt.Errorf("kruise-daemon never answered its NodeImage (log %s): %w", d.log, err)
	}
	ready := time.Since(t0)

	patch := client.MergeFrom(ni.DeepCopy())
	ni.Spec.Images = map[string]appsv1alpha1.ImageSpec{}
	for _, ref := range viaDaemon {
		i := strings.LastIndex(ref, ":")
		ni.Spec.Images[ref[:i]] = appsv1alpha1.ImageSpec{Tags: []appsv1alpha1.ImageTagSpec{{Tag: ref[i+1:], Version: 1,
			PullPolicy: &appsv1alpha1.ImageTagPullPolicy{TimeoutSeconds: ptr.To[int32](120), BackoffLimit: ptr.To[int32](1), TTLSecondsAfterFinished: ptr.To[int32](300)}}}}
	}
	reqs0, err := nodeImageRequests(ctx)
	if err != nil {
		return nil, err
	}
	pids["kruise-daemon"] = d.cmd.Process.Pid
	cpu := newCPUMeter(pids)
	specAt := time.Now()
	if err := env.Client.Patch(ctx, ni, patch); err != nil {
		return nil, err
	}
	err = sw.waitFor(ctx, 5*time.Minute, func(st appsv1alpha1.NodeImageStatus) (bool, error) {
		if st.Failed > 0 {
			return false, fmt.Errorf("daemon failed %d pulls: %+v", st.Failed, st.ImageStatuses)
		}
		return st.Succeeded == benchPullImages, nil
	})
	if err != nil {
		return nil, fmt.Errorf("daemon pulls (log %s): %w", d.log, err)
	}
	viaD := time.Since(specAt)
	used, _ := cpu.used()
	reqs1, err := nodeImageRequests(ctx)
	if err != nil {
		return nil, err
	}
	rss := d.peakRSS()
	writes, succeeded := sw.counts(benchPullImages)
	t0 = time.Now()
	if err := pullDirect(ctx, rt, directAfter); err != nil {
		return nil, fmt.Errorf("baseline after the daemon: %w", err)
	}
	after := time.Since(t0)
	baseline := (before + after) / 2
	first, last, calls, err := pullTimes(filepath.Join(base, "logs", "containerd.log"), viaDaemon)
	if err != nil {
		return nil, err
	}
	return []string{
		fmt.Sprintf("baseline: %d small images pulled by direct CRI PullImage, %d at a time: %v (%.1f images/s), the mean of %v before the daemon and %v after it (other images each time)",
			benchPullImages, benchPullWorkers, baseline.Round(time.Millisecond), benchPullImages/baseline.Seconds(), before.Round(time.Millisecond), after.Round(time.Millisecond)),
		fmt.Sprintf("  CPU while pulling the baseline before the daemon: %s", describeCPU(baseUsed)),
		fmt.Sprintf("kruise-daemon: %d other images of the same size through one NodeImage, %d workers, until status Succeeded: %v (%.1f images/s, %.2fx the baseline)",
			benchPullImages, benchPullWorkers, viaD.Round(time.Millisecond), benchPullImages/viaD.Seconds(), viaD.Seconds()/baseline.Seconds()),
		fmt.Sprintf("  where it went: spec written -> first PullImage %v; first PullImage -> last returned %v (%d PullImage calls); last returned -> status Succeeded seen %v",
			first.Sub(specAt).Round(time.Millisecond), last.Sub(first).Round(time.Millisecond), calls, succeeded.Sub(last).Round(time.Millisecond)),
		fmt.Sprintf("  %d status writes seen; nodeimages requests served: %s; CPU: %s", writes, describeRequests(reqs0, reqs1), describeCPU(used)),
		fmt.Sprintf("kruise-daemon start (healthy -> first status on its empty NodeImage, not counted above): %v; peak RSS: %s; log %s",
			ready.Round(time.Millisecond), rss, d.saveLog("daemon-pull")),
	}, nil
}

// pidFromFile reads a pid file; 0 when it cannot (the CPU meter then leaves the process out).
func pidFromFile(path string) int {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	return pid
}

// benchNode is the node name the benchmark's daemon serves.
const benchNode = "bench-daemon-node"

func mustTag(ref string) name.Tag {
	t, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		panic(err) // refs here are built by the benchmark itself
	}
	return t
}

func pullDirect(ctx context.Context, rt *cri.Runtime, refs []string) error {
	work := make(chan string)
	errs := make(chan error, len(refs))
	var wg sync.WaitGroup
	for w := 0; w < benchPullWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ref := range work {
				if _, err := rt.Images.PullImage(ctx, &criv1.PullImageRequest{Image: &criv1.ImageSpec{Image: ref}}); err != nil {
					errs <- fmt.Errorf("pull %s: %w", ref, err)
				}
			}
		}()
	}
	for _, r := range refs {
		work <- r
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs
}

func startDaemonProcess(ctx context.Context, dir, hostVarRun string) (*benchProcess, error) {
	bin, ports, err := binaryAndPorts(ctx, "github.com/kruise-addon/kruise-addon/cmd/kruise-daemon", 1)
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	d, err := startProcess(bin, []string{"--kubeconfig", env.Kubeconfig, "--hostvarrun", hostVarRun, "--addr", addr, "--enable-pprof=false",
		"--max-workers-for-pull-image=" + strconv.Itoa(benchPullWorkers), "-v=1"},
		[]string{"NODE_NAME=" + benchNode}, filepath.Join(dir, "daemon.log"))
	if err != nil {
		return nil, err
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		resp, err := httpGet(ctx, "http://"+addr+"/healthz")
		return err == nil && resp == 200, nil
	})
	if err != nil {
		d.stop()
		return nil, fmt.Errorf("kruise-daemon not healthy (log %s): %w", d.log, err)
	}
	return d, nil
}

func httpGet(ctx context.Context, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}
