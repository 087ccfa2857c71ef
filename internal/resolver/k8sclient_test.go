// SPDX-License-Identifier: Apache-2.0

package resolver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/rest"
)

// fakeAPIServer answers the list and watch requests of EndpointSlices in
// namespace "sdp" the way the Kubernetes API server does, in JSON: the list
// holds initial, the watch streams what the test sends on events.
type fakeAPIServer struct {
	t       *testing.T
	initial []*discoveryv1.EndpointSlice
	events  chan *discoveryv1.EndpointSlice // sent as ADDED
}

func (s *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/apis/discovery.k8s.io/v1/namespaces/sdp/endpointslices" {
		s.t.Errorf("unexpected request %s", r.URL)
		http.NotFound(w, r)
		return
	}
	assert.Equal(s.t, "kubernetes.io/service-name=consumers", r.URL.Query().Get("labelSelector"))
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Query().Get("watch") != "true" {
		items := make([]discoveryv1.EndpointSlice, len(s.initial))
		for i, slice := range s.initial {
			items[i] = *slice
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"apiVersion": "discovery.k8s.io/v1",
			"kind":       "EndpointSliceList",
			"metadata":   map[string]any{"resourceVersion": "1"},
			"items":      items,
		})
		return
	}
	w.(http.Flusher).Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case slice := <-s.events:
			slice.APIVersion, slice.Kind = "discovery.k8s.io/v1", "EndpointSlice"
			_ = json.NewEncoder(w).Encode(map[string]any{"type": "ADDED", "object": slice})
			w.(http.Flusher).Flush()
		}
	}
}

func TestK8sRESTClientListsAndWatches(t *testing.T) {
	first := slice("consumers-a", "consumers", endpoint{address: "10.0.0.10", hostname: "consumer-0", ready: isReady})
	first.ResourceVersion = "1"
	api := &fakeAPIServer{t: t, initial: []*discoveryv1.EndpointSlice{first}, events: make(chan *discoveryv1.EndpointSlice)}
	server := httptest.NewServer(api)
	t.Cleanup(server.Close)

	source, err := newRESTEndpointSlices(&rest.Config{Host: server.URL})
	require.NoError(t, err)
	source.noWatchList = true // this server does not stream an initial list
	rec := newRecorder(t)
	set := rec.settings()
	set.K8sClient = source
	res := rec.start(k8sConfig(), set)
	assert.Equal(t, members("consumer-0", "tcp://10.0.0.10:4319"), rec.next())

	second := slice("consumers-b", "consumers", endpoint{address: "10.0.0.11", hostname: "consumer-1", ready: isReady})
	second.ResourceVersion = "2"
	api.events <- second
	assert.Equal(t, members("consumer-0", "tcp://10.0.0.10:4319", "consumer-1", "tcp://10.0.0.11:4319"), rec.next())

	rec.shutdown(res) // ends the watch request, so that server.Close returns
}
