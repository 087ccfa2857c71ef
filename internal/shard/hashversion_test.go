// SPDX-License-Identifier: Apache-2.0

package shard

import (
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// versionTraces builds resources whose attributes cover every value kind the
// hash encodes, so that the routed values depend on the whole canonical
// encoding and not only on strings.
func versionTraces(resources int) ptrace.Traces {
	td := ptrace.NewTraces()
	for r := range resources {
		rs := td.ResourceSpans().AppendEmpty()
		attrs := rs.Resource().Attributes()
		attrs.PutStr("service.name", fmt.Sprintf("svc-%d", r))
		attrs.PutStr("tenant", fmt.Sprintf("tenant-%d", r%5))
		attrs.PutInt("host.index", int64(r))
		attrs.PutBool("canary", r%3 == 0)
		attrs.PutDouble("weight", float64(r)/7)
		attrs.PutEmptySlice("zones").AppendEmpty().SetStr(fmt.Sprintf("zone-%d", r%4))
		attrs.PutEmptyMap("k8s").PutStr("namespace", fmt.Sprintf("ns-%d", r%2))
		rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName(fmt.Sprintf("span-%d", r))
	}
	return td
}

// resourceHashes hashes each resource of req the way the router must, with
// the otlpwire functions themselves, keyed by service.name.
type resourceHashes struct {
	identity map[string]uint64 // HashWith(ver)
	keyed    map[string]uint64 // HashKeysWith(ver, keys), for resources holding a key
}

func hashResources(t *testing.T, req otlpwire.Request, ver otlpwire.HashVersion, keys []string) resourceHashes {
	t.Helper()
	h := resourceHashes{identity: map[string]uint64{}, keyed: map[string]uint64{}}
	for rd, err := range req.Resources() {
		if err != nil {
			t.Fatal(err)
		}
		res, err := rd.Resource()
		if err != nil {
			t.Fatal(err)
		}
		name, ok, err := res.Attribute("service.name")
		if err != nil || !ok {
			t.Fatalf("resource without service.name: %v", err)
		}
		identity, err := res.HashWith(ver)
		if err != nil {
			t.Fatal(err)
		}
		if ver == otlpwire.HashV1 {
			// Version 1 is what Hash and HashKeys have always returned.
			v1, err := res.Hash()
			if err != nil || v1 != identity {
				t.Fatalf("%s: Hash() = %#x, %v; HashWith(HashV1) = %#x", name.Str(), v1, err, identity)
			}
		}
		h.identity[name.Str()] = identity
		if len(keys) == 0 {
			continue
		}
		keyed, found, err := res.HashKeysWith(ver, keys)
		if err != nil {
			t.Fatal(err)
		}
		if ver == otlpwire.HashV1 {
			v1, v1Found, err := res.HashKeys(keys)
			if err != nil || v1 != keyed || v1Found != found {
				t.Fatalf("%s: HashKeys = %#x (%d found), %v; HashKeysWith(HashV1) = %#x (%d found)", name.Str(), v1, v1Found, err, keyed, found)
			}
		}
		if found > 0 {
			h.keyed[name.Str()] = keyed
		}
	}
	return h
}

// placement is where a Router sent each resource and the ResourceHash its
// frames carried, keyed by service.name.
type placement struct {
	shard map[string]int
	hash  map[string]uint64
}

func routeWith(t *testing.T, req otlpwire.Request, s RouterSettings) placement {
	t.Helper()
	r, err := NewRouter(s)
	if err != nil {
		t.Fatal(err)
	}
	var f Frames
	if err := r.Route(req, &f); err != nil {
		t.Fatal(err)
	}
	p := placement{shard: map[string]int{}, hash: map[string]uint64{}}
	for _, d := range decodeAll(t, &f) {
		name, _ := d.td.ResourceSpans().At(0).Resource().Attributes().Get("service.name")
		if _, dup := p.shard[name.Str()]; dup {
			t.Fatalf("%s framed twice", name.Str())
		}
		p.shard[name.Str()] = d.shard
		p.hash[name.Str()] = d.frame.ResourceHash
	}
	return p
}

func TestRouteUsesTheConfiguredHashVersion(t *testing.T) {
	const resources, shards = 40, 7
	req := marshal(t, versionTraces(resources))
	byVersion := map[otlpwire.HashVersion]placement{}
	for _, ver := range []otlpwire.HashVersion{otlpwire.HashV1, otlpwire.HashV2} {
		want := hashResources(t, req, ver, nil)
		got := routeWith(t, req, RouterSettings{Shards: shards, MaxFrameBytes: sdp.MaxArrayLen, HashVersion: ver})
		if len(got.shard) != resources {
			t.Fatalf("HashV%d: %d resources framed, want %d", ver, len(got.shard), resources)
		}
		for name, hash := range want.identity {
			if got.hash[name] != hash {
				t.Errorf("HashV%d: %s has ResourceHash %#x, want HashWith = %#x", ver, name, got.hash[name], hash)
			}
			if wantShard := Jump(hash, shards); got.shard[name] != wantShard {
				t.Errorf("HashV%d: %s on shard %d, want Jump(%#x, %d) = %d", ver, name, got.shard[name], hash, shards, wantShard)
			}
		}
		byVersion[ver] = got
	}
	moved := 0
	for name, h1 := range byVersion[otlpwire.HashV1].hash {
		if h1 == byVersion[otlpwire.HashV2].hash[name] {
			t.Errorf("%s: both versions give ResourceHash %#x", name, h1)
		}
		if byVersion[otlpwire.HashV1].shard[name] != byVersion[otlpwire.HashV2].shard[name] {
			moved++
		}
	}
	// With 7 shards about 6 of every 7 resources change shard; none moving
	// would mean the version reached the frame field but not the choice.
	if moved == 0 {
		t.Errorf("no resource changed shard between HashV1 and HashV2")
	}
}

func TestRouteByAttributesUsesTheConfiguredHashVersion(t *testing.T) {
	const resources, shards = 40, 16
	td := versionTraces(resources)
	// Some resources carry no tenant: they go to DefaultShard whatever the
	// version.
	for i := 0; i < resources; i += 8 {
		td.ResourceSpans().At(i).Resource().Attributes().Remove("tenant")
	}
	req := marshal(t, td)
	keys := []string{"tenant"}
	tenantShards := map[otlpwire.HashVersion]map[int]bool{}
	for _, ver := range []otlpwire.HashVersion{otlpwire.HashV1, otlpwire.HashV2} {
		want := hashResources(t, req, ver, keys)
		got := routeWith(t, req, RouterSettings{Shards: shards, Attributes: keys, MaxFrameBytes: sdp.MaxArrayLen, HashVersion: ver})
		if len(want.keyed) != resources-5 {
			t.Fatalf("HashV%d: %d resources hold a tenant, want %d", ver, len(want.keyed), resources-5)
		}
		tenantShards[ver] = map[int]bool{}
		for name, identity := range want.identity {
			// The frame carries the identity hash, not the routing key.
			if got.hash[name] != identity {
				t.Errorf("HashV%d: %s has ResourceHash %#x, want HashWith = %#x", ver, name, got.hash[name], identity)
			}
			key, ok := want.keyed[name]
			wantShard := DefaultShard
			if ok {
				wantShard = Jump(key, shards)
				tenantShards[ver][wantShard] = true
			}
			if got.shard[name] != wantShard {
				t.Errorf("HashV%d: %s on shard %d, want %d", ver, name, got.shard[name], wantShard)
			}
		}
	}
	// Five tenants over 16 shards: the two versions place them differently.
	if fmt.Sprint(tenantShards[otlpwire.HashV1]) == fmt.Sprint(tenantShards[otlpwire.HashV2]) {
		t.Errorf("tenants use shards %v with both versions", tenantShards[otlpwire.HashV1])
	}
}
