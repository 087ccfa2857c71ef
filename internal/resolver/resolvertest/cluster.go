// SPDX-License-Identifier: Apache-2.0

// Package resolvertest holds what tests of the k8s resolver, and of the
// processor running it, need: a Kubernetes cluster's EndpointSlices in
// client-go's fake clientset. Only tests import it, so the typed clients it
// pulls in never reach a Collector build.
package resolvertest

import (
	"context"
	"sync/atomic"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
)

// Cluster holds EndpointSlices in client-go's fake clientset and serves
// them as the k8s resolver's EndpointSliceSource through the typed
// discovery/v1 client, as the resolver's own REST client serves a real API
// server's.
type Cluster struct {
	clientset *fake.Clientset
	failList  atomic.Pointer[error]
}

// NewCluster returns a cluster holding objects.
func NewCluster(objects ...runtime.Object) *Cluster {
	return &Cluster{clientset: fake.NewClientset(objects...)}
}

// FailList makes every list fail with err from now on; nil lists again.
func (c *Cluster) FailList(err error) {
	if err == nil {
		c.failList.Store(nil)
		return
	}
	c.failList.Store(&err)
}

// List lists the EndpointSlices of namespace.
func (c *Cluster) List(ctx context.Context, namespace string, opts metav1.ListOptions) (*discoveryv1.EndpointSliceList, error) {
	if err := c.failList.Load(); err != nil {
		return nil, *err
	}
	return c.clientset.DiscoveryV1().EndpointSlices(namespace).List(ctx, opts)
}

// Watch watches the EndpointSlices of namespace.
func (c *Cluster) Watch(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	return c.clientset.DiscoveryV1().EndpointSlices(namespace).Watch(ctx, opts)
}

// IsWatchListSemanticsUnSupported tells the informer, as the fake
// clientset's own informers are told, that it cannot stream an initial list.
func (*Cluster) IsWatchListSemanticsUnSupported() bool { return true }

// Create adds slice to the cluster.
func (c *Cluster) Create(t testing.TB, slice *discoveryv1.EndpointSlice) {
	t.Helper()
	if _, err := c.clientset.DiscoveryV1().EndpointSlices(slice.Namespace).Create(context.Background(), slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Update replaces slice in the cluster.
func (c *Cluster) Update(t testing.TB, slice *discoveryv1.EndpointSlice) {
	t.Helper()
	if _, err := c.clientset.DiscoveryV1().EndpointSlices(slice.Namespace).Update(context.Background(), slice, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Delete removes the slice name of namespace.
func (c *Cluster) Delete(t testing.TB, namespace, name string) {
	t.Helper()
	if err := c.clientset.DiscoveryV1().EndpointSlices(namespace).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}
