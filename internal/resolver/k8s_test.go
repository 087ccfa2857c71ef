// SPDX-License-Identifier: Apache-2.0

package resolver

import (
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/otelcol-sdp/otelcol-sdp/internal/resolver/resolvertest"
)

// endpoint describes one EndpointSlice endpoint of a test.
type endpoint struct {
	address  string
	hostname string // empty: none
	pod      string // empty: no targetRef
	ready    *bool  // nil: condition unset
	// terminating marks a pod being deleted that still serves, as
	// Kubernetes reports it: serving and terminating, not ready.
	terminating bool
	// conditions, when set, are the endpoint's conditions as they are.
	conditions *discoveryv1.EndpointConditions
}

var (
	isReady  = func() *bool { b := true; return &b }()
	notReady = func() *bool { b := false; return &b }()
)

// slice builds an EndpointSlice of service in namespace "sdp".
func slice(name, service string, endpoints ...endpoint) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: "sdp",
			Labels:    map[string]string{discoveryv1.LabelServiceName: service},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for _, e := range endpoints {
		ep := discoveryv1.Endpoint{Addresses: []string{e.address}, Conditions: discoveryv1.EndpointConditions{Ready: e.ready}}
		if e.terminating {
			ep.Conditions = discoveryv1.EndpointConditions{Ready: notReady, Serving: isReady, Terminating: isReady}
		}
		if e.conditions != nil {
			ep.Conditions = *e.conditions
		}
		if e.hostname != "" {
			ep.Hostname = &e.hostname
		}
		if e.pod != "" {
			ep.TargetRef = &corev1.ObjectReference{Kind: "Pod", Namespace: "sdp", Name: e.pod}
		}
		s.Endpoints = append(s.Endpoints, ep)
	}
	return s
}

func k8sConfig() Config {
	return Config{K8s: configoptional.Some(K8sConfig{Service: "consumers.sdp", Port: 4319, Timeout: waitFor})}
}

func TestK8sFollowsEndpointSlices(t *testing.T) {
	cluster := resolvertest.NewCluster(
		slice("consumers-a", "consumers",
			endpoint{address: "10.0.0.12", hostname: "consumer-2", pod: "consumer-2", ready: isReady},
			endpoint{address: "10.0.0.10", hostname: "consumer-0", pod: "consumer-0"}, // ready unset: ready
			endpoint{address: "10.0.0.11", hostname: "consumer-1", pod: "consumer-1", ready: notReady},
		),
		// Another Service's slice in the same namespace is not read.
		slice("other-a", "other", endpoint{address: "10.0.9.9", hostname: "other-0", ready: isReady}),
	)
	rec := newRecorder(t)
	set := rec.settings()
	set.K8sClient = cluster
	rec.start(k8sConfig(), set)

	// The first list arrives within Start.
	select {
	case m := <-rec.updates:
		assert.Equal(t, members("consumer-0", "tcp://10.0.0.10:4319", "consumer-2", "tcp://10.0.0.12:4319"), m)
	default:
		t.Fatal("Start returned before the first update")
	}

	// consumer-1 becomes ready.
	cluster.Update(t, slice("consumers-a", "consumers",
		endpoint{address: "10.0.0.12", hostname: "consumer-2", pod: "consumer-2", ready: isReady},
		endpoint{address: "10.0.0.10", hostname: "consumer-0", pod: "consumer-0"},
		endpoint{address: "10.0.0.11", hostname: "consumer-1", pod: "consumer-1", ready: isReady},
	))
	assert.Equal(t, members(
		"consumer-0", "tcp://10.0.0.10:4319",
		"consumer-1", "tcp://10.0.0.11:4319",
		"consumer-2", "tcp://10.0.0.12:4319",
	), rec.next())

	// A second slice adds consumer-3, identified by its pod since it has no
	// hostname.
	cluster.Create(t, slice("consumers-b", "consumers", endpoint{address: "10.0.1.3", pod: "consumer-3", ready: isReady}))
	assert.Equal(t, members(
		"consumer-0", "tcp://10.0.0.10:4319",
		"consumer-1", "tcp://10.0.0.11:4319",
		"consumer-2", "tcp://10.0.0.12:4319",
		"consumer-3", "tcp://10.0.1.3:4319",
	), rec.next())

	// consumer-0 restarts with a new address: same ID, new endpoint; and
	// consumer-2 is terminating (not ready, still serving): it leaves.
	terminating := endpoint{address: "10.0.0.12", hostname: "consumer-2", pod: "consumer-2", terminating: true}
	cluster.Update(t, slice("consumers-a", "consumers",
		terminating,
		endpoint{address: "10.0.0.20", hostname: "consumer-0", pod: "consumer-0", ready: isReady},
		endpoint{address: "10.0.0.11", hostname: "consumer-1", pod: "consumer-1", ready: isReady},
	))
	assert.Equal(t, members(
		"consumer-0", "tcp://10.0.0.20:4319",
		"consumer-1", "tcp://10.0.0.11:4319",
		"consumer-3", "tcp://10.0.1.3:4319",
	), rec.next())

	// Deleting a slice removes its endpoints.
	cluster.Delete(t, "sdp", "consumers-b")
	assert.Equal(t, members(
		"consumer-0", "tcp://10.0.0.20:4319",
		"consumer-1", "tcp://10.0.0.11:4319",
	), rec.next())

	// A change elsewhere, or one that leaves the members as they are, is
	// not announced; the next real change is.
	cluster.Update(t, slice("other-a", "other", endpoint{address: "10.0.9.8", hostname: "other-0", ready: isReady}))
	same := slice("consumers-a", "consumers",
		endpoint{address: "10.0.0.11", hostname: "consumer-1", pod: "consumer-1", ready: isReady},
		endpoint{address: "10.0.0.20", hostname: "consumer-0", pod: "consumer-0", ready: isReady},
	)
	same.Labels["unrelated"] = "change"
	cluster.Update(t, same)
	cluster.Create(t, slice("consumers-c", "consumers", endpoint{address: "10.0.2.1", ready: isReady}))
	assert.Equal(t, members(
		"10.0.2.1", "tcp://10.0.2.1:4319", // no hostname, no pod: the address
		"consumer-0", "tcp://10.0.0.20:4319",
		"consumer-1", "tcp://10.0.0.11:4319",
	), rec.next())
	rec.noUpdate()
}

func TestK8sDualStackEndpointIsOneMember(t *testing.T) {
	v4 := slice("consumers-v4", "consumers", endpoint{address: "10.0.0.10", hostname: "consumer-0", ready: isReady})
	v6 := slice("consumers-v6", "consumers", endpoint{address: "fd00::10", hostname: "consumer-0", ready: isReady})
	v6.AddressType = discoveryv1.AddressTypeIPv6
	cluster := resolvertest.NewCluster(v6, v4)
	rec := newRecorder(t)
	set := rec.settings()
	set.K8sClient = cluster
	rec.start(k8sConfig(), set)
	assert.Equal(t, members("consumer-0", "tcp://10.0.0.10:4319"), rec.next())

	cluster.Delete(t, "sdp", "consumers-v4")
	assert.Equal(t, members("consumer-0", "tcp://[fd00::10]:4319"), rec.next())
}

func TestK8sListFailureReportsAndRecovers(t *testing.T) {
	cluster := resolvertest.NewCluster(slice("consumers-a", "consumers", endpoint{address: "10.0.0.10", hostname: "consumer-0", ready: isReady}))
	forbidden := errors.New("endpointslices is forbidden")
	cluster.FailList(forbidden)
	rec := newRecorder(t)
	set := rec.settings()
	set.K8sClient = cluster
	cfg := k8sConfig()
	cfg.K8s.Get().Timeout = 50 * time.Millisecond
	rec.start(cfg, set) // returns after the timeout, without members

	var errs []error
	for !errors.Is(errors.Join(errs...), forbidden) || !errors.Is(errors.Join(errs...), errK8sNotSynced) {
		errs = append(errs, rec.nextError())
	}
	rec.noUpdate()

	cluster.FailList(nil)
	assert.Equal(t, members("consumer-0", "tcp://10.0.0.10:4319"), rec.next())
}

func TestK8sRoutineWatchEndsAreNotFailures(t *testing.T) {
	gr := schema.GroupResource{Group: discoveryv1.GroupName, Resource: "endpointslices"}
	assert.False(t, isWatchFailure(io.EOF))
	assert.False(t, isWatchFailure(apierrors.NewResourceExpired("too old resource version")))
	assert.False(t, isWatchFailure(apierrors.NewGone("gone")))
	assert.True(t, isWatchFailure(apierrors.NewForbidden(gr, "", errors.New("no RBAC"))))
	assert.True(t, isWatchFailure(io.ErrUnexpectedEOF))
	assert.True(t, isWatchFailure(errors.New("connection refused")))
}

func TestK8sShutdownStopsTheInformer(t *testing.T) {
	cluster := resolvertest.NewCluster(slice("consumers-a", "consumers", endpoint{address: "10.0.0.10", hostname: "consumer-0", ready: isReady}))
	rec := newRecorder(t)
	set := rec.settings()
	set.K8sClient = cluster
	res := rec.start(k8sConfig(), set)
	assert.Equal(t, members("consumer-0", "tcp://10.0.0.10:4319"), rec.next())

	rec.shutdown(res)
	goleak.VerifyNone(t)
}

func TestK8sWithoutClusterFailsInNew(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, err := New(k8sConfig(), Settings{})
	assert.ErrorContains(t, err, "k8s: building the in-cluster client")
}

func TestK8sTerminatingOrNotServingEndpointsAreNotMembers(t *testing.T) {
	// A Service with publishNotReadyAddresses reports every endpoint ready,
	// terminating ones too: terminating and serving decide then.
	cluster := resolvertest.NewCluster(slice("consumers-a", "consumers",
		endpoint{address: "10.0.0.10", hostname: "consumer-0", conditions: &discoveryv1.EndpointConditions{Ready: isReady, Serving: isReady, Terminating: notReady}},
		endpoint{address: "10.0.0.11", hostname: "consumer-1", conditions: &discoveryv1.EndpointConditions{Ready: isReady, Serving: isReady, Terminating: isReady}},
		endpoint{address: "10.0.0.12", hostname: "consumer-2", conditions: &discoveryv1.EndpointConditions{Ready: isReady, Serving: notReady}},
		endpoint{address: "10.0.0.13", hostname: "consumer-3", conditions: &discoveryv1.EndpointConditions{}}, // all unset: ready
	))
	rec := newRecorder(t)
	set := rec.settings()
	set.K8sClient = cluster
	rec.start(k8sConfig(), set)
	assert.Equal(t, members("consumer-0", "tcp://10.0.0.10:4319", "consumer-3", "tcp://10.0.0.13:4319"), rec.next())
}

func TestK8sNamedPort(t *testing.T) {
	named := func(name, portName string, port int32, eps ...endpoint) *discoveryv1.EndpointSlice {
		s := slice(name, "consumers", eps...)
		s.Ports = []discoveryv1.EndpointPort{
			{Name: ptrTo("metrics"), Port: ptrTo[int32](9090)},
			{Name: ptrTo(portName), Port: ptrTo(port)},
		}
		return s
	}
	cluster := resolvertest.NewCluster(
		named("consumers-a", "sdp", 4501, endpoint{address: "10.0.0.10", hostname: "consumer-0"}),
		// Another slice of the same Service maps the name to another number.
		named("consumers-b", "sdp", 4502, endpoint{address: "10.0.0.11", hostname: "consumer-1"}),
		// A slice without the name contributes nobody.
		named("consumers-c", "other", 4503, endpoint{address: "10.0.0.12", hostname: "consumer-2"}),
	)
	rec := newRecorder(t)
	set := rec.settings()
	set.K8sClient = cluster
	rec.start(Config{K8s: configoptional.Some(K8sConfig{Service: "consumers.sdp", PortName: "sdp", Timeout: waitFor})}, set)
	assert.Equal(t, members("consumer-0", "tcp://10.0.0.10:4501", "consumer-1", "tcp://10.0.0.11:4502"), rec.next())
}

func TestK8sNoEndpointEmptiesTheFleet(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("keep_last_on_empty=%v", keep), func(t *testing.T) {
			cluster := resolvertest.NewCluster(slice("consumers-a", "consumers", endpoint{address: "10.0.0.10", hostname: "consumer-0"}))
			rec := newRecorder(t)
			set := rec.settings()
			set.K8sClient = cluster
			cfg := k8sConfig()
			cfg.KeepLastOnEmpty = keep
			rec.start(cfg, set)
			assert.Equal(t, members("consumer-0", "tcp://10.0.0.10:4319"), rec.next())

			// Scaled to zero: the slice stays, with no endpoint.
			cluster.Update(t, slice("consumers-a", "consumers"))
			if !keep {
				assert.Empty(t, rec.next())
			}
			cluster.Update(t, slice("consumers-a", "consumers", endpoint{address: "10.0.0.11", hostname: "consumer-1"}))
			assert.Equal(t, members("consumer-1", "tcp://10.0.0.11:4319"), rec.next())
			rec.noUpdate()
		})
	}
}

func TestK8sAddressIdentityIsWarnedOnce(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	cluster := resolvertest.NewCluster(slice("consumers-a", "consumers",
		endpoint{address: "10.0.0.10"}, endpoint{address: "10.0.0.11"}, endpoint{address: "10.0.0.12", hostname: "consumer-2"}))
	rec := newRecorder(t)
	set := rec.settings()
	set.K8sClient, set.Logger = cluster, zap.New(core)
	rec.start(k8sConfig(), set)
	assert.Equal(t, members("10.0.0.10", "tcp://10.0.0.10:4319", "10.0.0.11", "tcp://10.0.0.11:4319", "consumer-2", "tcp://10.0.0.12:4319"), rec.next())
	warned := logs.FilterMessageSnippet("its address is its identity").All()
	require.Len(t, warned, 1)
	assert.Equal(t, "10.0.0.10", warned[0].ContextMap()["address"])
}

func ptrTo[T any](v T) *T { return &v }
