package webhooktest

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Cache answers reads from objects held in memory the way the manager's informer cache does, so
// that a benchmark of a handler measures the handler and not a fake client's conversions: a
// List with UnsafeDisableDeepCopy hands out the held objects, every other read copies them;
// field selectors are answered from the indexes registered with IndexField. Writes go to a fake
// client over the same objects, which the reads do not see. It is not safe for concurrent use.
type Cache struct {
	client.Client
	objs    map[schema.GroupKind][]client.Object
	indexes map[schema.GroupKind]map[string]client.IndexerFunc
	// values are the index values of each object, computed at the first List that needs them
	// as the cache computes them when an object arrives.
	values map[client.Object]map[string][]string
}

// NewCache holds objs, with every kind of the add-on and of Kubernetes.
func NewCache(objs ...client.Object) *Cache {
	c := &Cache{Client: Reader(objs...), objs: map[schema.GroupKind][]client.Object{},
		indexes: map[schema.GroupKind]map[string]client.IndexerFunc{}, values: map[client.Object]map[string][]string{}}
	for _, o := range objs {
		gk := c.kindOf(o)
		c.objs[gk] = append(c.objs[gk], o)
	}
	return c
}

func (c *Cache) kindOf(o runtime.Object) schema.GroupKind {
	gvk, err := apiutil.GVKForObject(o, c.Scheme())
	if err != nil {
		panic(fmt.Sprintf("webhooktest: %v", err))
	}
	return schema.GroupKind{Group: gvk.Group, Kind: strings.TrimSuffix(gvk.Kind, "List")}
}

// IndexField registers an index, as the cache's field indexer does.
func (c *Cache) IndexField(_ context.Context, obj client.Object, field string, fn client.IndexerFunc) error {
	gk := c.kindOf(obj)
	if c.indexes[gk] == nil {
		c.indexes[gk] = map[string]client.IndexerFunc{}
	}
	c.indexes[gk][field] = fn
	return nil
}

// Get copies the held object of key into obj.
func (c *Cache) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	gk := c.kindOf(obj)
	for _, o := range c.objs[gk] {
		if o.GetNamespace() == key.Namespace && o.GetName() == key.Name {
			reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(o.DeepCopyObject()).Elem())
			return nil
		}
	}
	return apierrors.NewNotFound(schema.GroupResource{Group: gk.Group, Resource: strings.ToLower(gk.Kind)}, key.Name)
}

// List sets list's items to the held objects its options select.
func (c *Cache) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	gk := c.kindOf(list)
	var reqs fields.Requirements
	if o.FieldSelector != nil {
		reqs = o.FieldSelector.Requirements()
	}
	var items []runtime.Object
	for _, obj := range c.objs[gk] {
		if o.Namespace != "" && obj.GetNamespace() != o.Namespace {
			continue
		}
		if o.LabelSelector != nil && !o.LabelSelector.Matches(labels.Set(obj.GetLabels())) {
			continue
		}
		if o.FieldSelector != nil && !c.indexed(gk, obj, reqs) {
			continue
		}
		if o.UnsafeDisableDeepCopy == nil || !*o.UnsafeDisableDeepCopy {
			items = append(items, obj.DeepCopyObject())
		} else {
			items = append(items, obj)
		}
	}
	return meta.SetList(list, items)
}

// indexed tells whether obj has, for every requirement of a field selector, the value it
// requires in that field's index.
func (c *Cache) indexed(gk schema.GroupKind, obj client.Object, reqs fields.Requirements) bool {
	for _, r := range reqs {
		vs, ok := c.values[obj][r.Field]
		if !ok {
			fn := c.indexes[gk][r.Field]
			if fn == nil {
				panic(fmt.Sprintf("webhooktest: no index %s on %s", r.Field, gk))
			}
			if c.values[obj] == nil {
				c.values[obj] = map[string][]string{}
			}
			vs = fn(obj)
			c.values[obj][r.Field] = vs
		}
		found := false
		for _, v := range vs {
			found = found || v == r.Value
		}
		if !found {
			return false
		}
	}
	return true
}

// CacheManager is Manager over a Cache: the cache, the client and the API reader all read from
// it, and its field indexer registers indexes with it.
func CacheManager(c *Cache) manager.Manager {
	return cacheManager{readerManager: readerManager{scheme: c.Scheme(), client: c}, cache: c}
}

type cacheManager struct {
	readerManager
	cache *Cache
}

func (m cacheManager) GetFieldIndexer() client.FieldIndexer { return m.cache }

// GetCache reads from the Cache; an informer of it delivers the objects the Cache holds to each
// handler added, as an informer's first list does, and is synced.
func (m cacheManager) GetCache() cache.Cache {
	return struct {
		client.Reader
		cache.Informers
	}{Reader: m.cache, Informers: heldInformers{FakeInformers: &informertest.FakeInformers{Scheme: m.cache.Scheme()}, held: m.cache}}
}

type heldInformers struct {
	*informertest.FakeInformers
	held *Cache
}

func (h heldInformers) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	inf, err := h.FakeInformers.GetInformer(ctx, obj, opts...)
	return heldInformer{Informer: inf, objs: h.held.objs[h.held.kindOf(obj)]}, err
}

type heldInformer struct {
	cache.Informer
	objs []client.Object
}

func (h heldInformer) AddEventHandler(handler toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	reg, err := h.Informer.AddEventHandler(handler)
	for _, o := range h.objs {
		handler.OnAdd(o, true)
	}
	return reg, err
}
