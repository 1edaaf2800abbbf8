package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/kruise-addon/kruise-addon/installer"
)

// recordReadTimeout bounds a lookup of records in one cluster, so that an unreachable cluster
// does not hold a request for another's operation.
const recordReadTimeout = 10 * time.Second

// recordStore reads and writes operations' records in the clusters they act on.
type recordStore struct {
	clusters Clusters
	// kubeFor makes a cluster's client; tests give a fake one.
	kubeFor func(Cluster) (kubernetes.Interface, error)

	mu    sync.Mutex
	kubes map[string]kubernetes.Interface
}

func newRecordStore(clusters Clusters) *recordStore {
	return &recordStore{clusters: clusters, kubeFor: kubeClient, kubes: map[string]kubernetes.Interface{}}
}

// kubeClient is a client of c, each request bounded as the installer's are.
func kubeClient(c Cluster) (kubernetes.Interface, error) {
	cfg, err := c.getter.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("cluster %s: kubeconfig: %w", c.Name, err)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = installer.DefaultRequestTimeout
	}
	return kubernetes.NewForConfig(cfg)
}

func (s *recordStore) kube(cluster string) (kubernetes.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k, ok := s.kubes[cluster]; ok {
		return k, nil
	}
	c, ok := s.clusters[cluster]
	if !ok {
		return nil, fmt.Errorf("no cluster %q in the clusters file", cluster)
	}
	k, err := s.kubeFor(c)
	if err != nil {
		return nil, err
	}
	s.kubes[cluster] = k
	return k, nil
}

// save writes r over whatever the cluster holds: the server running an operation owns its
// record. A namespace that does not exist yet (an install creates it) is an error the next
// write retries.
func (s *recordStore) save(ctx context.Context, cluster string, r record) error {
	k, err := s.kube(cluster)
	if err != nil {
		return err
	}
	r.resourceVersion = ""
	cm, err := r.configMap()
	if err != nil {
		return err
	}
	cms := k.CoreV1().ConfigMaps(cm.Namespace)
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: installer.FieldManager})
	if apierrors.IsNotFound(err) {
		_, err = cms.Create(ctx, cm, metav1.CreateOptions{FieldManager: installer.FieldManager})
	}
	if err != nil {
		return fmt.Errorf("write record %s/%s of operation %s: %w", cm.Namespace, cm.Name, r.Op.ID, err)
	}
	return nil
}

// replace writes r only if its record is still the one read (its resourceVersion): another
// server marking the same lost operation interrupted loses, and reads the winner's.
func (s *recordStore) replace(ctx context.Context, cluster string, r record) (record, error) {
	k, err := s.kube(cluster)
	if err != nil {
		return r, err
	}
	cm, err := r.configMap()
	if err != nil {
		return r, err
	}
	out, err := k.CoreV1().ConfigMaps(cm.Namespace).Update(ctx, cm, metav1.UpdateOptions{FieldManager: installer.FieldManager})
	if apierrors.IsConflict(err) {
		got, ok, ferr := s.findIn(ctx, cluster, r.Op.ID)
		if ferr != nil || !ok {
			return r, errors.Join(err, ferr)
		}
		return got, nil
	}
	if err != nil {
		return r, fmt.Errorf("write record %s/%s of operation %s: %w", cm.Namespace, cm.Name, r.Op.ID, err)
	}
	return recordOf(out)
}

// find looks for the record of operation id in every cluster; the cluster it names is the
// one it was found in, as this server calls it.
func (s *recordStore) find(ctx context.Context, id string) (record, string, bool, error) {
	var errs []error
	for _, name := range s.clusters.Names() {
		r, ok, err := s.findIn(ctx, name, id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			return r, name, true, nil
		}
	}
	return record{}, "", false, errors.Join(errs...)
}

func (s *recordStore) findIn(ctx context.Context, cluster, id string) (record, bool, error) {
	rs, err := s.list(ctx, cluster, "", labels.Set{LabelOperation: id})
	if err != nil || len(rs) == 0 {
		return record{}, false, err
	}
	return rs[0], true, nil
}

// list reads the records of a cluster that match the labels, in namespace ("" for all); a
// record that does not decode is skipped.
func (s *recordStore) list(ctx context.Context, cluster, namespace string, match labels.Set) ([]record, error) {
	k, err := s.kube(cluster)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, recordReadTimeout)
	defer cancel()
	sel := match.AsSelector().String()
	if _, ok := match[LabelOperation]; !ok {
		// Every record, and nothing else, carries the operation label.
		sel = strings.TrimSuffix(LabelOperation+","+sel, ",")
	}
	list, err := k.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: list operation records: %w", cluster, err)
	}
	var out []record
	for k := range list.Items {
		r, err := recordOf(&list.Items[k])
		if err != nil {
			continue
		}
		r.Op.Cluster = cluster
		out = append(out, r)
	}
	return out, nil
}

// prune deletes the oldest finished records of a release beyond maxStoredOperations.
func (s *recordStore) prune(ctx context.Context, cluster, namespace, release string) error {
	rs, err := s.list(ctx, cluster, namespace, labels.Set{LabelRelease: release})
	if err != nil {
		return err
	}
	k, err := s.kube(cluster)
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range prunable(rs, maxStoredOperations) {
		err := k.CoreV1().ConfigMaps(namespace).Delete(ctx, recordName(r.Op.ID), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
