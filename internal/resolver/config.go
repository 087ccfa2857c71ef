// SPDX-License-Identifier: Apache-2.0

package resolver

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// Defaults of the fields a configuration may leave unset (zero).
const (
	// DefaultDNSInterval is how often the dns resolver asks again.
	DefaultDNSInterval = 5 * time.Second
	// DefaultDNSTimeout bounds one round of DNS queries.
	DefaultDNSTimeout = time.Second
	// DefaultK8sTimeout bounds the wait for the first list of
	// EndpointSlices in Start.
	DefaultK8sTimeout = 10 * time.Second
)

// Config is sdpshard's `resolver:` block: exactly one of Static, DNS and K8s
// is set. Durations left zero take their defaults.
//
// A component holds it as configoptional.Optional[Config] so that an
// absent block is neither validated nor mistaken for an empty one:
//
//	Resolver configoptional.Optional[resolver.Config] `mapstructure:"resolver"`
//
// Validate's messages name the field relative to this block ("dns:
// hostname must be set"); confmap.Validate prefixes them with the key of
// the field that holds the Config ("resolver: dns: hostname must be set").
// Calling Validate again from the holder's own Validate would report each
// error twice.
type Config struct {
	// Static is a fixed list of endpoints.
	Static configoptional.Optional[StaticConfig] `mapstructure:"static"`
	// DNS asks a DNS server for the A and AAAA, or SRV, records of a name.
	DNS configoptional.Optional[DNSConfig] `mapstructure:"dns"`
	// K8s watches the EndpointSlices of a Kubernetes Service.
	K8s configoptional.Optional[K8sConfig] `mapstructure:"k8s"`
	// KeepLastOnEmpty makes an answer that lists no member (a DNS name
	// that does not exist or has no records, a Service without ready
	// endpoints) keep the last list instead of emptying the fleet. By
	// default an empty answer empties the fleet, and batches are refused
	// as retryable (reason no_members) until a member appears: the fleet
	// is what the source says. Not used by static, which is never empty.
	KeepLastOnEmpty bool `mapstructure:"keep_last_on_empty"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// StaticConfig lists the members once; each member's ID is its endpoint.
type StaticConfig struct {
	// Endpoints are unix:///path/to.sock or tcp://host:port.
	Endpoints []string `mapstructure:"endpoints"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// RecordType selects the DNS records the dns resolver asks for.
type RecordType string

const (
	// RecordA asks for the A and AAAA records of the hostname; each address
	// is a member, dialled on DNSConfig.Port, and its ID is its endpoint.
	RecordA RecordType = "a"
	// RecordSRV asks for the SRV records of the hostname; each target is a
	// member whose ID is the target name (lower case, without the final
	// dot), dialled on the record's port at the target's address.
	RecordSRV RecordType = "srv"
)

// DNSConfig configures the dns resolver.
type DNSConfig struct {
	// Hostname is the name asked for: the headless Service's name for
	// record "a" (consumers.ns.svc.cluster.local), the full SRV name for
	// record "srv" (_sdp._tcp.consumers.ns.svc.cluster.local).
	Hostname string `mapstructure:"hostname"`
	// Port is the TCP port dialled on every address; required with record
	// "a", not allowed with "srv", whose records carry their ports.
	Port int `mapstructure:"port"`
	// Record is "a" (default: A and AAAA) or "srv".
	Record RecordType `mapstructure:"record"`
	// Interval is the time between two resolutions (default 5s).
	Interval time.Duration `mapstructure:"interval"`
	// Timeout bounds one resolution, all its queries included (default 1s).
	Timeout time.Duration `mapstructure:"timeout"`
	// Server is the host:port of the DNS server to ask. Empty means the
	// system's resolver (/etc/resolv.conf, with its search domains).
	Server string `mapstructure:"server"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// K8sConfig configures the k8s resolver.
type K8sConfig struct {
	// Service is "name.namespace" of the Service whose EndpointSlices list
	// the members; a bare "name" means namespace "default".
	Service string `mapstructure:"service"`
	// Port is the TCP port dialled on every endpoint's address. Set Port
	// or PortName, not both.
	Port int `mapstructure:"port"`
	// PortName names the Service's port to dial, for a Service with
	// several ports: each EndpointSlice says which number it has. An
	// EndpointSlice without a port of that name contributes no member.
	PortName string `mapstructure:"port_name"`
	// Timeout bounds how long Start waits for the first list of
	// EndpointSlices (default 10s); when it passes, the list arrives later.
	Timeout time.Duration `mapstructure:"timeout"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Validate checks the configuration; every error names the offending field.
func (c *Config) Validate() error {
	var set []string
	var errs []error
	if s := c.Static.Get(); s != nil {
		set = append(set, "static")
		errs = append(errs, s.validate()...)
	}
	if d := c.DNS.Get(); d != nil {
		set = append(set, "dns")
		errs = append(errs, d.validate()...)
	}
	if k := c.K8s.Get(); k != nil {
		set = append(set, "k8s")
		errs = append(errs, k.validate()...)
	}
	if c.KeepLastOnEmpty && c.Static.HasValue() {
		errs = append(errs, errors.New("keep_last_on_empty: not used with static, whose list is never empty"))
	}
	switch len(set) {
	case 0:
		return ErrNoResolver
	case 1:
	default:
		errs = append(errs, fmt.Errorf("only one of static, dns or k8s may be set, not %s", strings.Join(set, " and ")))
	}
	return errors.Join(errs...)
}

func (s *StaticConfig) validate() []error {
	if len(s.Endpoints) == 0 {
		return []error{errors.New("static: endpoints: at least one endpoint is required")}
	}
	var errs []error
	seen := make(map[string]int, len(s.Endpoints))
	for i, endpoint := range s.Endpoints {
		if _, _, err := transport.ParseEndpoint(endpoint); err != nil {
			errs = append(errs, fmt.Errorf("static: endpoints[%d]: %w", i, err))
		}
		if first, dup := seen[endpoint]; dup {
			errs = append(errs, fmt.Errorf("static: endpoints[%d]: %q is already endpoints[%d]", i, endpoint, first))
		} else {
			seen[endpoint] = i
		}
	}
	return errs
}

func (d *DNSConfig) validate() []error {
	var errs []error
	if d.Hostname == "" {
		errs = append(errs, errors.New("dns: hostname must be set"))
	} else if strings.ContainsAny(d.Hostname, " /:") {
		errs = append(errs, fmt.Errorf("dns: hostname: %q is not a DNS name", d.Hostname))
	}
	switch d.Record {
	case "", RecordA:
		if d.Port <= 0 || d.Port > 65535 {
			errs = append(errs, fmt.Errorf(`dns: port: %d is not a TCP port (1 to 65535); record "a" needs one`, d.Port))
		}
	case RecordSRV:
		if d.Port != 0 {
			errs = append(errs, errors.New(`dns: port: not used with record "srv", whose records carry the port`))
		}
	default:
		errs = append(errs, fmt.Errorf(`dns: record: unknown value %q, want "a" or "srv"`, d.Record))
	}
	if d.Interval < 0 {
		errs = append(errs, fmt.Errorf("dns: interval: must be positive, got %s", d.Interval))
	}
	if d.Timeout < 0 {
		errs = append(errs, fmt.Errorf("dns: timeout: must be positive, got %s", d.Timeout))
	}
	if d.Server != "" {
		if _, port, err := net.SplitHostPort(d.Server); err != nil || port == "" {
			errs = append(errs, fmt.Errorf("dns: server: %q is not host:port", d.Server))
		}
	}
	return errs
}

func (k *K8sConfig) validate() []error {
	var errs []error
	name, namespace := k.serviceName()
	if name == "" || namespace == "" || strings.Contains(namespace, ".") {
		errs = append(errs, fmt.Errorf(`k8s: service: %q is not "name.namespace"`, k.Service))
	}
	switch {
	case k.PortName != "" && k.Port != 0:
		errs = append(errs, errors.New("k8s: port and port_name: set one, not both"))
	case k.PortName != "":
	case k.Port <= 0 || k.Port > 65535:
		errs = append(errs, fmt.Errorf("k8s: port: %d is not a TCP port (1 to 65535); or name the Service's port with port_name", k.Port))
	}
	if k.Timeout < 0 {
		errs = append(errs, fmt.Errorf("k8s: timeout: must be positive, got %s", k.Timeout))
	}
	return errs
}

// Kind names the configured resolver, "static", "dns" or "k8s", for logs
// and telemetry attributes; it is empty when none is set.
func (c *Config) Kind() string {
	switch {
	case c.Static.HasValue():
		return "static"
	case c.DNS.HasValue():
		return "dns"
	case c.K8s.HasValue():
		return "k8s"
	}
	return ""
}

// serviceName splits Service into its name and namespace.
func (k *K8sConfig) serviceName() (name, namespace string) {
	name, namespace, ok := strings.Cut(k.Service, ".")
	if !ok {
		namespace = "default"
	}
	return name, namespace
}

// durationKeys are the keys, relative to the resolver block, of durations.
var durationKeys = []string{"dns::interval", "dns::timeout", "k8s::timeout"}

var _ confmap.Unmarshaler = (*Config)(nil)

// Unmarshal refuses a duration written as a bare number: the Collector's
// decoder would take `interval: 5` as 5 nanoseconds.
func (c *Config) Unmarshal(conf *confmap.Conf) error {
	var errs []error
	for _, key := range durationKeys {
		switch v := conf.Get(key).(type) {
		case nil, string, time.Duration:
		default:
			errs = append(errs, fmt.Errorf("%s: %v has no unit; write a duration such as \"5s\" or \"100ms\"",
				strings.ReplaceAll(key, confmap.KeyDelimiter, ": "), v))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return conf.Unmarshal(c)
}
