// SPDX-License-Identifier: Apache-2.0

package resolver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap"
)

// holder is how sdpshard holds the resolver block: absent unless written.
type holder struct {
	Resolver configoptional.Optional[Config] `mapstructure:"resolver"`
}

// load unmarshals and validates raw the way the Collector does.
func load(t *testing.T, raw map[string]any) (*holder, error) {
	t.Helper()
	var h holder
	if err := confmap.NewFromStringMap(raw).Unmarshal(&h); err != nil {
		return nil, err
	}
	return &h, confmap.Validate(&h)
}

func TestConfigUnmarshal(t *testing.T) {
	h, err := load(t, map[string]any{"resolver": map[string]any{
		"dns": map[string]any{"hostname": "consumers.sdp.svc.cluster.local", "port": 4319, "interval": "30s"},
	}})
	require.NoError(t, err)
	cfg := h.Resolver.Get()
	require.NotNil(t, cfg)
	assert.False(t, cfg.Static.HasValue())
	assert.False(t, cfg.K8s.HasValue())
	assert.Equal(t, DNSConfig{Hostname: "consumers.sdp.svc.cluster.local", Port: 4319, Interval: 30 * time.Second}, *cfg.DNS.Get())

	h, err = load(t, map[string]any{"resolver": map[string]any{
		"k8s": map[string]any{"service": "consumers.sdp", "port": 4319},
	}})
	require.NoError(t, err)
	assert.Equal(t, K8sConfig{Service: "consumers.sdp", Port: 4319}, *h.Resolver.Get().K8s.Get())

	h, err = load(t, map[string]any{"resolver": map[string]any{
		"static": map[string]any{"endpoints": []any{"tcp://a:4319", "unix:///x.sock"}},
	}})
	require.NoError(t, err)
	assert.Equal(t, []string{"tcp://a:4319", "unix:///x.sock"}, h.Resolver.Get().Static.Get().Endpoints)

	// Without a resolver block there is nothing to validate.
	h, err = load(t, map[string]any{})
	require.NoError(t, err)
	assert.False(t, h.Resolver.HasValue())
}

func TestConfigRefusesDurationsWithoutUnit(t *testing.T) {
	_, err := load(t, map[string]any{"resolver": map[string]any{
		"dns": map[string]any{"hostname": "x", "port": 1, "interval": 5, "timeout": 1},
	}})
	assert.ErrorContains(t, err, `dns: interval: 5 has no unit`)
	assert.ErrorContains(t, err, `dns: timeout: 1 has no unit`)

	_, err = load(t, map[string]any{"resolver": map[string]any{
		"k8s": map[string]any{"service": "x.y", "port": 1, "timeout": 10},
	}})
	assert.ErrorContains(t, err, `k8s: timeout: 10 has no unit`)
}

func TestValidateNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		name     string
		resolver map[string]any
		want     []string
	}{
		{"nothing", map[string]any{}, []string{"resolver: one of static, dns or k8s must be set"}},
		{"two", map[string]any{
			"static": map[string]any{"endpoints": []any{"tcp://a:1"}},
			"dns":    map[string]any{"hostname": "x", "port": 1},
		}, []string{"resolver: only one of static, dns or k8s may be set, not static and dns"}},
		{"static empty", map[string]any{"static": map[string]any{}}, []string{"resolver: static: endpoints: at least one endpoint is required"}},
		{"static bad", map[string]any{"static": map[string]any{"endpoints": []any{"tcp://a:1", "a:1", "tcp://a:1"}}}, []string{
			"resolver: static: endpoints[1]: ",
			// confmap prefixes the path to the first line of joined errors
			"\n" + `static: endpoints[2]: "tcp://a:1" is already endpoints[0]`,
		}},
		{"dns hostname", map[string]any{"dns": map[string]any{"port": 1}}, []string{"resolver: dns: hostname must be set"}},
		{"dns hostname bad", map[string]any{"dns": map[string]any{"hostname": "tcp://x", "port": 1}}, []string{`resolver: dns: hostname: "tcp://x" is not a DNS name`}},
		{"dns port", map[string]any{"dns": map[string]any{"hostname": "x"}}, []string{`resolver: dns: port: 0 is not a TCP port (1 to 65535); record "a" needs one`}},
		{"dns port big", map[string]any{"dns": map[string]any{"hostname": "x", "port": 70000}}, []string{`resolver: dns: port: 70000 is not a TCP port`}},
		{"dns srv port", map[string]any{"dns": map[string]any{"hostname": "x", "record": "srv", "port": 1}}, []string{`resolver: dns: port: not used with record "srv"`}},
		{"dns record", map[string]any{"dns": map[string]any{"hostname": "x", "record": "aaaa", "port": 1}}, []string{`resolver: dns: record: unknown value "aaaa", want "a" or "srv"`}},
		{"dns durations", map[string]any{"dns": map[string]any{"hostname": "x", "port": 1, "interval": "-1s", "timeout": "-2s"}}, []string{
			"resolver: dns: interval: must be positive, got -1s",
			"\ndns: timeout: must be positive, got -2s",
		}},
		{"dns server", map[string]any{"dns": map[string]any{"hostname": "x", "port": 1, "server": "10.0.0.10"}}, []string{`resolver: dns: server: "10.0.0.10" is not host:port`}},
		{"k8s service", map[string]any{"k8s": map[string]any{"port": 1}}, []string{`resolver: k8s: service: "" is not "name.namespace"`}},
		{"k8s service fqdn", map[string]any{"k8s": map[string]any{"service": "consumers.sdp.svc", "port": 1}}, []string{`resolver: k8s: service: "consumers.sdp.svc" is not "name.namespace"`}},
		{"k8s service no namespace", map[string]any{"k8s": map[string]any{"service": "consumers.", "port": 1}}, []string{`resolver: k8s: service: "consumers." is not "name.namespace"`}},
		{"k8s port", map[string]any{"k8s": map[string]any{"service": "consumers.sdp"}}, []string{"resolver: k8s: port: 0 is not a TCP port (1 to 65535)"}},
		{"k8s timeout", map[string]any{"k8s": map[string]any{"service": "consumers.sdp", "port": 1, "timeout": "-1s"}}, []string{"resolver: k8s: timeout: must be positive, got -1s"}},
		{"k8s port and name", map[string]any{"k8s": map[string]any{"service": "consumers.sdp", "port": 1, "port_name": "sdp"}}, []string{"resolver: k8s: port and port_name: set one, not both"}},
		{"keep with static", map[string]any{"static": map[string]any{"endpoints": []any{"tcp://a:1"}}, "keep_last_on_empty": true}, []string{"resolver: keep_last_on_empty: not used with static"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, map[string]any{"resolver": tc.resolver})
			require.Error(t, err)
			for _, want := range tc.want {
				assert.ErrorContains(t, err, want)
			}
		})
	}
}

func TestValidateAcceptsDefaults(t *testing.T) {
	for _, cfg := range []Config{
		{Static: configoptional.Some(StaticConfig{Endpoints: []string{"tcp://a:1", "unix:///x.sock"}})},
		{DNS: configoptional.Some(DNSConfig{Hostname: "consumers.sdp", Port: 4319})},
		{DNS: configoptional.Some(DNSConfig{Hostname: "_sdp._tcp.consumers.sdp", Record: RecordSRV, Server: "[::1]:53"})},
		{K8s: configoptional.Some(K8sConfig{Service: "consumers", Port: 4319})},
		{K8s: configoptional.Some(K8sConfig{Service: "consumers", PortName: "sdp"}), KeepLastOnEmpty: true},
		{DNS: configoptional.Some(DNSConfig{Hostname: "consumers.sdp", Port: 4319}), KeepLastOnEmpty: true},
	} {
		assert.NoError(t, cfg.Validate())
	}
}

func TestNewRefusesAnInvalidConfig(t *testing.T) {
	_, err := New(Config{}, Settings{})
	assert.ErrorIs(t, err, ErrNoResolver)
	_, err = New(Config{DNS: configoptional.Some(DNSConfig{})}, Settings{})
	assert.ErrorContains(t, err, "dns: hostname must be set")
}

func TestConfigKind(t *testing.T) {
	assert.Empty(t, (&Config{}).Kind())
	assert.Equal(t, "static", (&Config{Static: configoptional.Some(StaticConfig{})}).Kind())
	assert.Equal(t, "dns", (&Config{DNS: configoptional.Some(DNSConfig{})}).Kind())
	assert.Equal(t, "k8s", (&Config{K8s: configoptional.Some(K8sConfig{})}).Kind())
}

func TestK8sServiceNamespace(t *testing.T) {
	name, namespace := (&K8sConfig{Service: "consumers.sdp"}).serviceName()
	assert.Equal(t, [2]string{"consumers", "sdp"}, [2]string{name, namespace})
	name, namespace = (&K8sConfig{Service: "consumers"}).serviceName()
	assert.Equal(t, [2]string{"consumers", "default"}, [2]string{name, namespace})
}
