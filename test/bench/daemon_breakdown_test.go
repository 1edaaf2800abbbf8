package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// statusWatch follows one NodeImage's status through a watch, so that the bench learns of each
// status the daemon writes as the daemon's own informer would, without polling the apiserver
// (which the baseline does not do either). It counts the writes and remembers when Succeeded
// first reached each count.
type statusWatch struct {
	mu        sync.Mutex
	last      *appsv1alpha1.NodeImageStatus
	writes    int
	succeeded map[int32]time.Time
	changed   chan struct{} // closed and replaced on every status change
	done      chan struct{}
	stop      func()
}

// watchNodeImage starts following the named NodeImage.
func watchNodeImage(ctx context.Context, name string) (*statusWatch, error) {
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		return nil, err
	}
	w, err := c.Watch(ctx, &appsv1alpha1.NodeImageList{}, &client.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name)})
	if err != nil {
		return nil, err
	}
	sw := &statusWatch{succeeded: map[int32]time.Time{}, changed: make(chan struct{}), done: make(chan struct{}), stop: w.Stop}
	go func() {
		defer close(sw.done)
		for ev := range w.ResultChan() {
			ni, ok := ev.Object.(*appsv1alpha1.NodeImage)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			now := time.Now()
			sw.mu.Lock()
			if sw.last == nil || !apiequality.Semantic.DeepEqual(*sw.last, ni.Status) {
				if ni.Status.FirstSyncStatus != nil {
					sw.writes++
				}
				if _, ok := sw.succeeded[ni.Status.Succeeded]; !ok {
					sw.succeeded[ni.Status.Succeeded] = now
				}
				st := ni.Status
				sw.last = &st
				close(sw.changed)
				sw.changed = make(chan struct{})
			}
			sw.mu.Unlock()
		}
	}()
	return sw, nil
}

// waitFor blocks until the status satisfies done, returning what done returned an error for.
func (sw *statusWatch) waitFor(ctx context.Context, timeout time.Duration, done func(appsv1alpha1.NodeImageStatus) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		sw.mu.Lock()
		ch := sw.changed
		var st appsv1alpha1.NodeImageStatus
		if sw.last != nil {
			st = *sw.last
		}
		sw.mu.Unlock()
		if ok, err := done(st); ok || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("status %+v: %w", st, ctx.Err())
		case <-ch:
		case <-sw.done:
			return fmt.Errorf("watch on the NodeImage ended")
		}
	}
}

// counts returns how many status writes the watch saw and when Succeeded first reached n.
func (sw *statusWatch) counts(n int32) (int, time.Time) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.writes, sw.succeeded[n]
}

// pullTimes reads containerd's log for when the first PullImage of refs began and the last one
// returned; calls counts the PullImage calls of refs that returned (more than len(refs) means a
// tag was pulled twice).
func pullTimes(logPath string, refs []string) (first, last time.Time, calls int, err error) {
	f, err := os.Open(logPath)
	if err != nil {
		return first, last, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, `msg="PullImage \"`) || !mentionsAny(line, refs) {
			continue
		}
		ts, ok := strings.CutPrefix(line, `time="`)
		if !ok {
			continue
		}
		ts, _, _ = strings.Cut(ts, `"`)
		t, perr := time.Parse(time.RFC3339Nano, ts)
		if perr != nil {
			continue
		}
		if strings.Contains(line, "returns image reference") {
			calls++
			if t.After(last) {
				last = t
			}
		} else if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	return first, last, calls, sc.Err()
}

func mentionsAny(line string, refs []string) bool {
	for _, r := range refs {
		if strings.Contains(line, `PullImage \"`+r+`\"`) {
			return true
		}
	}
	return false
}

// nodeImageRequests reads from the apiserver's metrics how many requests on nodeimages it has
// served so far, by verb and subresource ("GET", "PUT status").
func nodeImageRequests(ctx context.Context) (map[string]float64, error) {
	c, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		return nil, err
	}
	s, err := scrapeURL(ctx, c, env.Config.Host+"/metrics")
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for key, v := range s {
		name, labels, _ := strings.Cut(key, "{")
		if name != "apiserver_request_total" {
			continue
		}
		lv := parseLabels(strings.TrimSuffix(labels, "}"))
		if lv["resource"] != "nodeimages" {
			continue
		}
		what := lv["verb"]
		if lv["subresource"] != "" {
			what += " " + lv["subresource"]
		}
		out[what] += v
	}
	return out, nil
}

// describeRequests renders the requests served between two nodeImageRequests readings.
func describeRequests(before, after map[string]float64) string {
	var parts []string
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			parts = append(parts, k+" "+strconv.FormatFloat(d, 'f', 0, 64))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
