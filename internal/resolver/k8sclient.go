// SPDX-License-Identifier: Apache-2.0

package resolver

import (
	"context"
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// EndpointSliceSource lists and watches the EndpointSlices of a namespace:
// all the k8s resolver needs of a Kubernetes client.
type EndpointSliceSource interface {
	List(ctx context.Context, namespace string, opts metav1.ListOptions) (*discoveryv1.EndpointSliceList, error)
	Watch(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error)
}

// restEndpointSlices is an EndpointSliceSource on a REST client that knows
// only the discovery/v1 types. client-go's typed clients register every
// API group of Kubernetes, which would make every build of the Collector
// compile them all.
type restEndpointSlices struct {
	client *rest.RESTClient
	params runtime.ParameterCodec
	// noWatchList, set by tests whose server cannot stream an initial
	// list, makes informers list first.
	noWatchList bool
}

// newRESTEndpointSlices builds the source on the API server of cfg.
func newRESTEndpointSlices(cfg *rest.Config) (*restEndpointSlices, error) {
	scheme := runtime.NewScheme()
	if err := discoveryv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	gv := discoveryv1.SchemeGroupVersion
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = rest.CodecFactoryForGeneratedClient(scheme, serializer.NewCodecFactory(scheme)).WithoutConversion()
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	client, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &restEndpointSlices{client: client, params: runtime.NewParameterCodec(scheme)}, nil
}

// newInClusterEndpointSlices builds the source from the pod's service
// account.
func newInClusterEndpointSlices() (*restEndpointSlices, error) {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("k8s: building the in-cluster client: %w", err)
	}
	s, err := newRESTEndpointSlices(cfg)
	if err != nil {
		return nil, fmt.Errorf("k8s: building the in-cluster client: %w", err)
	}
	return s, nil
}

func (s *restEndpointSlices) List(ctx context.Context, namespace string, opts metav1.ListOptions) (*discoveryv1.EndpointSliceList, error) {
	list := &discoveryv1.EndpointSliceList{}
	err := s.client.Get().
		Namespace(namespace).
		Resource("endpointslices").
		VersionedParams(&opts, s.params).
		Do(ctx).
		Into(list)
	return list, err
}

func (s *restEndpointSlices) Watch(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return s.client.Get().
		Namespace(namespace).
		Resource("endpointslices").
		VersionedParams(&opts, s.params).
		Watch(ctx)
}

// IsWatchListSemanticsUnSupported tells client-go's reflector whether the
// server can stream the initial list.
func (s *restEndpointSlices) IsWatchListSemanticsUnSupported() bool { return s.noWatchList }
