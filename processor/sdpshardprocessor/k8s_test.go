// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-sdp/otelcol-sdp/internal/resolver"
	"github.com/otelcol-sdp/otelcol-sdp/internal/resolver/resolvertest"
)

// loopbackPort reserves one TCP port on each of addrs (distinct loopback
// addresses standing for pods) and returns the endpoints, registered for
// startSidecar.
func loopbackPort(t *testing.T, addrs []string) []string {
	t.Helper()
	for range 20 {
		first, err := net.Listen("tcp", net.JoinHostPort(addrs[0], "0"))
		require.NoError(t, err)
		port := strconv.Itoa(first.Addr().(*net.TCPAddr).Port)
		listeners := []net.Listener{first}
		for _, a := range addrs[1:] {
			l, err := net.Listen("tcp", net.JoinHostPort(a, port))
			if err != nil {
				break
			}
			listeners = append(listeners, l)
		}
		if len(listeners) < len(addrs) {
			for _, l := range listeners {
				l.Close()
			}
			continue
		}
		var endpoints []string
		for i, l := range listeners {
			endpoint := "tcp://" + net.JoinHostPort(addrs[i], port)
			reservedPorts.Store(endpoint, l)
			t.Cleanup(func() {
				if l, ok := reservedPorts.LoadAndDelete(endpoint); ok {
					l.(net.Listener).Close()
				}
			})
			endpoints = append(endpoints, endpoint)
		}
		return endpoints
	}
	t.Fatal("no port free on every loopback address")
	return nil
}

// consumerSlice is the EndpointSlice of Service consumers.sdp with a named
// port "sdp" (and another, so that the name matters): one endpoint per
// pod, consumer-i at addrs[i], terminating where asked.
func consumerSlice(port int, addrs []string, terminating map[int]bool) *discoveryv1.EndpointSlice {
	yes, no := true, false
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "consumers-a", Namespace: "sdp",
			Labels: map[string]string{discoveryv1.LabelServiceName: "consumers"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{
			{Name: ptr("metrics"), Port: ptr(int32(9090))},
			{Name: ptr("sdp"), Port: ptr(int32(port))},
		},
	}
	for i, a := range addrs {
		ep := discoveryv1.Endpoint{Addresses: []string{a}, Hostname: ptr(fmt.Sprintf("consumer-%d", i)),
			Conditions: discoveryv1.EndpointConditions{Ready: &yes, Serving: &yes, Terminating: &no}}
		if terminating[i] {
			// A pod being deleted that still serves, as Kubernetes reports it.
			ep.Conditions = discoveryv1.EndpointConditions{Ready: &no, Serving: &yes, Terminating: &yes}
		}
		s.Endpoints = append(s.Endpoints, ep)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// The k8s resolver inside the processor: members from EndpointSlices by a
// named port, a terminating pod leaves the fleet with its held frames
// re-routed, and a ready pod comes back with its resources.
func TestK8sResolverDrivesTheFleet(t *testing.T) {
	addrs := []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}
	endpoints := loopbackPort(t, addrs)
	var recs []*recorder
	for _, e := range endpoints {
		rec := newRecorder()
		startSidecar(t, e, rec)
		recs = append(recs, rec)
	}
	_, portText, _ := net.SplitHostPort(endpoints[0][len("tcp://"):])
	port, _ := strconv.Atoi(portText)
	cluster := resolvertest.NewCluster(consumerSlice(port, addrs, nil))

	reg := newRegistry()
	reg.newSource = func(cfg *Config, set processor.Settings, onError func(error)) (memberSource, error) {
		return resolver.New(*cfg.Resolver.Get(), resolver.Settings{Logger: set.Logger, OnError: onError, K8sClient: cluster})
	}
	cfg := testConfig(nil)
	cfg.Resolver = configoptional.Some(resolver.Config{
		K8s: configoptional.Some(resolver.K8sConfig{Service: "consumers.sdp", PortName: "sdp", Timeout: 5 * time.Second}),
	})
	require.NoError(t, cfg.Validate())
	set := testSettings(nil)
	p, err := reg.createTraces(context.Background(), set, cfg, new(consumertest.TracesSink))
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	reg.mu.Lock()
	s := reg.sets[set.ID]
	reg.mu.Unlock()

	f := applied(t, s, "consumer-0", "consumer-1", "consumer-2")
	for i, e := range endpoints {
		idx, ok := f.Members.Index(fmt.Sprintf("consumer-%d", i))
		require.True(t, ok)
		assert.Equal(t, e, f.Endpoints[idx], "consumer-%d dialled on the named port", i)
	}
	td, _ := buildTraces(0, 30, 2)
	require.NoError(t, p.ConsumeTraces(context.Background(), td))
	for i, rec := range recs {
		for _, h := range hashesOf(rec) {
			assert.Equal(t, fmt.Sprintf("consumer-%d", i), f.Members.ID(f.Members.Owner(h)))
		}
	}

	// consumer-1 stops answering with a batch in flight, then its pod
	// terminates: the batch settles through the new owners.
	unblock := recs[1].block()
	t.Cleanup(unblock)
	done := make(chan error, 1)
	go func() {
		td, _ := buildTraces(1, 30, 2)
		done <- p.ConsumeTraces(context.Background(), td)
	}()
	select {
	case err := <-done:
		t.Fatalf("batch settled while consumer-1 was stalled: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	cluster.Update(t, consumerSlice(port, addrs, map[int]bool{1: true}))
	applied(t, s, "consumer-0", "consumer-2")
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("batch not settled after the terminating pod left")
	}
	unblock()

	// Ready again: it is back and owns its resources again.
	cluster.Update(t, consumerSlice(port, addrs, nil))
	f = applied(t, s, "consumer-0", "consumer-1", "consumer-2")
	before := len(recs[1].snapshot())
	td, _ = buildTraces(2, 30, 2)
	require.NoError(t, p.ConsumeTraces(context.Background(), td))
	got := recs[1].snapshot()[before:]
	assert.NotEmpty(t, got, "consumer-1 got nothing back")
	for _, r := range got {
		assert.Equal(t, "consumer-1", f.Members.ID(f.Members.Owner(r.frame.ResourceHash)))
	}
}
