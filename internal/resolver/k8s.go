// SPDX-License-Identifier: Apache-2.0

package resolver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
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
	client    EndpointSliceSource
	logger    *zap.Logger
	errs      errorLog
	pub       publisher

	// addressIDWarned is set once a member identified only by its address
	// has been logged.
	addressIDWarned bool

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
		c, err := newInClusterEndpointSlices()
		if err != nil {
			return nil, err
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

// Start runs the informer and waits, at most the timeout or until ctx
// ends, for the first member list.
func (r *k8sResolver) Start(startCtx context.Context, update func([]Member)) error {
	r.pub.update = update
	selector := discoveryv1.LabelServiceName + "=" + r.name
	// The wrapper tells the reflector when the client cannot stream the
	// initial list (client-go's fakes), as informers built from a clientset do.
	lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
			options.LabelSelector = selector
			return r.client.List(ctx, r.namespace, options)
		},
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			options.LabelSelector = selector
			return r.client.Watch(ctx, r.namespace, options)
		},
	}, r.client)
	r.informer = cache.NewSharedIndexInformer(lw, &discoveryv1.EndpointSlice{}, 0, cache.Indexers{})
	// Only the endpoints (and, for a named port, the ports) matter; the
	// rest of each slice is not kept.
	if err := r.informer.SetTransform(func(obj any) (any, error) { return trimEndpointSlice(obj, r.cfg.PortName != "") }); err != nil {
		return fmt.Errorf("k8s: %w", err)
	}
	if err := r.informer.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
		if isWatchFailure(err) {
			r.errs.failed(fmt.Errorf("k8s: watching EndpointSlices of %s.%s: %w", r.name, r.namespace, err))
		}
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
	case <-startCtx.Done():
		// Starting is abandoned; the informer keeps going until Shutdown.
	}
	return nil
}

// isWatchFailure tells a failed list or watch from the routine end of a
// watch, which the reflector resumes without losing events: a watch closed
// by the server, or one whose resource version expired.
func isWatchFailure(err error) bool {
	return !errors.Is(err, io.EOF) && !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err)
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

// appendMembers appends the endpoints of one slice that take new work.
func (r *k8sResolver) appendMembers(members []Member, slice *discoveryv1.EndpointSlice) []Member {
	// The server filters by label; checking again costs nothing and keeps
	// a client that does not filter from mixing in another Service.
	if slice.Labels[discoveryv1.LabelServiceName] != r.name {
		return members
	}
	port, ok := r.slicePort(slice)
	if !ok {
		return members
	}
	for _, ep := range slice.Endpoints {
		if !takesWork(ep.Conditions) || len(ep.Addresses) == 0 {
			continue
		}
		address := ep.Addresses[0]
		id := address
		switch {
		case ep.Hostname != nil && *ep.Hostname != "":
			id = *ep.Hostname
		case ep.TargetRef != nil && ep.TargetRef.Name != "":
			id = ep.TargetRef.Name
		default:
			r.warnAddressID(address)
		}
		members = append(members, Member{ID: id, Endpoint: "tcp://" + net.JoinHostPort(address, port)})
	}
	return members
}

// takesWork tells whether an endpoint is a member. Ready is the rule, with
// an unset condition read as ready, as Kubernetes asks; but a Service that
// publishes not-ready addresses reports every endpoint ready, terminating
// ones too, so an endpoint that is terminating or not serving is left out
// whatever its ready condition says.
func takesWork(c discoveryv1.EndpointConditions) bool {
	isFalse := func(b *bool) bool { return b != nil && !*b }
	return !isFalse(c.Ready) && !isFalse(c.Serving) && (c.Terminating == nil || !*c.Terminating)
}

// slicePort returns the port to dial the slice's endpoints on: the
// configured number, or the number the slice gives the configured port
// name; false when the slice has no port of that name.
func (r *k8sResolver) slicePort(slice *discoveryv1.EndpointSlice) (string, bool) {
	if r.cfg.PortName == "" {
		return r.port, true
	}
	for _, p := range slice.Ports {
		if p.Name != nil && *p.Name == r.cfg.PortName && p.Port != nil {
			return strconv.Itoa(int(*p.Port)), true
		}
	}
	r.logger.Debug("EndpointSlice has no port of the configured name; its endpoints are not members",
		zap.String("slice", slice.Name), zap.String("port_name", r.cfg.PortName))
	return "", false
}

// warnAddressID logs, once, that a member is identified by its address.
func (r *k8sResolver) warnAddressID(address string) {
	if r.addressIDWarned {
		return
	}
	r.addressIDWarned = true
	r.logger.Warn("A member of the fleet has neither a hostname nor a pod, so its address is its identity: a new consumer on that address takes over its keys. Run the consumers as a StatefulSet behind a headless Service for stable identities.",
		zap.String("service", r.name+"."+r.namespace), zap.String("address", address))
}

// trimEndpointSlice drops what the resolver does not read from a slice
// before the informer stores it; the ports only when they are not read.
func trimEndpointSlice(obj any, keepPorts bool) (any, error) {
	slice, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return obj, nil // a tombstone
	}
	slice.ManagedFields = nil
	slice.Annotations = nil
	if !keepPorts {
		slice.Ports = nil
	}
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
