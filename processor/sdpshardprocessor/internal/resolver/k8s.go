// SPDX-License-Identifier: Apache-2.0

package resolver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	discoveryv1client "k8s.io/client-go/kubernetes/typed/discovery/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// errK8sNotSynced is reported when the first list of EndpointSlices does
// not arrive within the timeout.
var errK8sNotSynced = errors.New("k8s: EndpointSlices not listed within the timeout; members follow when they are")

// k8sResolver watches the EndpointSlices of one Service through an
// informer and reports the ready endpoints.
type k8sResolver struct {
	cfg       K8sConfig
	name      string
	namespace string
	port      string
	client    discoveryv1client.EndpointSlicesGetter
	logger    *zap.Logger
	errs      errorLog
	pub       publisher

	informer cache.SharedIndexInformer
	// changed wakes the publishing loop; one pending signal covers any
	// number of events, since the loop reads the whole store.
	changed chan struct{}
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func newK8s(cfg K8sConfig, set Settings) (*k8sResolver, error) {
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultK8sTimeout
	}
	client := set.K8sClient
	if client == nil {
		restConfig, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("k8s: building the in-cluster client: %w", err)
		}
		c, err := discoveryv1client.NewForConfig(restConfig)
		if err != nil {
			return nil, fmt.Errorf("k8s: building the in-cluster client: %w", err)
		}
		client = c
	}
	name, namespace := cfg.serviceName()
	return &k8sResolver{
		cfg:       cfg,
		name:      name,
		namespace: namespace,
		port:      strconv.Itoa(cfg.Port),
		client:    client,
		logger:    set.Logger,
		errs:      errorLog{logger: set.Logger, onError: set.OnError, now: time.Now},
		changed:   make(chan struct{}, 1),
	}, nil
}

// Start runs the informer and waits, at most the timeout, for the first
// member list.
func (r *k8sResolver) Start(_ context.Context, update func([]Member)) error {
	r.pub.update = update
	selector := discoveryv1.LabelServiceName + "=" + r.name
	slices := r.client.EndpointSlices(r.namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
			options.LabelSelector = selector
			return slices.List(ctx, options)
		},
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			options.LabelSelector = selector
			return slices.Watch(ctx, options)
		},
	}
	r.informer = cache.NewSharedIndexInformer(lw, &discoveryv1.EndpointSlice{}, 0, cache.Indexers{})
	// Only the endpoints matter; the rest of each slice is not kept.
	if err := r.informer.SetTransform(trimEndpointSlice); err != nil {
		return fmt.Errorf("k8s: %w", err)
	}
	if err := r.informer.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
		r.errs.failed(fmt.Errorf("k8s: watching EndpointSlices of %s.%s: %w", r.name, r.namespace, err))
	}); err != nil {
		return fmt.Errorf("k8s: %w", err)
	}
	registration, err := r.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { r.signal() },
		UpdateFunc: func(any, any) { r.signal() },
		DeleteFunc: func(any) { r.signal() },
	})
	if err != nil {
		return fmt.Errorf("k8s: %w", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	published := make(chan struct{})
	r.wg.Go(func() { r.informer.RunWithContext(ctx) })
	r.wg.Go(func() { r.publishLoop(ctx, registration, published) })

	timer := time.NewTimer(r.cfg.Timeout)
	defer timer.Stop()
	select {
	case <-published:
	case <-timer.C:
		r.errs.failed(errK8sNotSynced)
	}
	return nil
}

func (r *k8sResolver) signal() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// publishLoop publishes the members once the informer holds the first
// complete list, then after every change.
func (r *k8sResolver) publishLoop(ctx context.Context, registration cache.ResourceEventHandlerRegistration, published chan<- struct{}) {
	if !cache.WaitForCacheSync(ctx.Done(), registration.HasSynced) {
		return
	}
	r.publish()
	close(published)
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.changed:
			r.publish()
		}
	}
}

func (r *k8sResolver) publish() {
	r.errs.succeeded()
	var members []Member
	for _, obj := range r.informer.GetStore().List() {
		if slice, ok := obj.(*discoveryv1.EndpointSlice); ok {
			members = r.appendMembers(members, slice)
		}
	}
	if r.pub.publish(members) {
		r.logger.Debug("Kubernetes members changed", zap.String("service", r.name+"."+r.namespace), zap.String("members", describe(members)))
	}
}

// appendMembers appends the ready endpoints of one slice.
func (r *k8sResolver) appendMembers(members []Member, slice *discoveryv1.EndpointSlice) []Member {
	// The server filters by label; checking again costs nothing and keeps
	// a client that does not filter from mixing in another Service.
	if slice.Labels[discoveryv1.LabelServiceName] != r.name {
		return members
	}
	for _, ep := range slice.Endpoints {
		// An unset ready condition means unknown, which Kubernetes asks
		// consumers to treat as ready.
		if ep.Conditions.Ready != nil && !*ep.Conditions.Ready || len(ep.Addresses) == 0 {
			continue
		}
		address := ep.Addresses[0]
		id := address
		switch {
		case ep.Hostname != nil && *ep.Hostname != "":
			id = *ep.Hostname
		case ep.TargetRef != nil && ep.TargetRef.Name != "":
			id = ep.TargetRef.Name
		}
		members = append(members, Member{ID: id, Endpoint: "tcp://" + net.JoinHostPort(address, r.port)})
	}
	return members
}

// trimEndpointSlice drops what the resolver does not read from a slice
// before the informer stores it.
func trimEndpointSlice(obj any) (any, error) {
	slice, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return obj, nil // a tombstone
	}
	slice.ManagedFields = nil
	slice.Annotations = nil
	slice.Ports = nil
	return slice, nil
}

// Shutdown stops the informer and waits for its goroutines; once it
// returns, update is not called again.
func (r *k8sResolver) Shutdown(ctx context.Context) error {
	if r.cancel == nil {
		return nil
	}
	r.cancel()
	r.pub.close()
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
