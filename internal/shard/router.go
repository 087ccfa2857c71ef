// SPDX-License-Identifier: Apache-2.0

package shard

import (
	"errors"
	"fmt"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// DefaultShard receives the resources that carry none of a Router's routing
// attributes. A fixed shard keeps them together and predictable; spreading
// them by identity instead would route them as if no attribute key had been
// configured.
const DefaultShard = 0

// ErrInvalidSettings reports RouterSettings that cannot route anything.
var ErrInvalidSettings = errors.New("shard: invalid router settings")

// RouterSettings configures a Router.
type RouterSettings struct {
	// Shards is the number of shards, at least 1.
	Shards int
	// Attributes, when not empty, are the resource attribute keys whose
	// values form the routing key (see otlpwire.Resource.HashKeysWith). When
	// empty, the routing key is the identity hash of all resource attributes.
	Attributes []string
	// MaxFrameBytes bounds the OTLP payload of one frame, at most
	// sdp.MaxArrayLen; larger resources are split into several frames.
	MaxFrameBytes int
	// HashVersion is the routing hash that computes both the routing key and
	// each frame's ResourceHash (see otlpwire.HashVersion). It has no
	// default: a different version sends resources to different shards, so
	// every caller states the one it routes with.
	HashVersion otlpwire.HashVersion
	// ByTraceID routes spans and log records by their trace id (TraceKey)
	// instead of by resource: a resource whose items belong to traces of
	// several members becomes one frame per member, each with the resource
	// and that member's items. Items without a trace id, metrics and
	// profiles go by the resource's key (Attributes or identity) as
	// without it.
	ByTraceID bool
	// ByMetricName routes each metric, with all its data points, by its
	// name (MetricKey), in the same way; spans and log records go by
	// resource.
	ByMetricName bool
	// ByStream routes each metric data point by its stream (StreamKey:
	// resource, scope, metric name and point attributes); spans and log
	// records go by resource. It takes precedence over ByMetricName.
	ByStream bool
	// PruneDictionaries makes each frame of a profiles resource carry the
	// request's dictionary pruned to what the resource references
	// (otlpwire.AppendRequestPruned) instead of whole: fewer bytes to send
	// and store, for more CPU here. A resource whose pruned request does
	// not fit MaxFrameBytes is split with the whole dictionary, as without
	// it.
	PruneDictionaries bool
}

// Router turns the bytes of an OTLP export request into SDP ResourceFrames
// grouped by shard: one frame per resource, or several standalone frames
// for a resource larger than MaxFrameBytes. All frames of one resource go to
// the same shard, chosen with Jump from the resource's routing key. Each
// frame's ResourceHash is the resource's identity hash (all its attributes,
// whatever the routing key) in the Router's hash version.
//
// A Router holds no per-request state, so one Router may be used by several
// goroutines at once, each with its own Frames.
type Router struct {
	static        *Members
	attributes    []string
	maxFrameBytes int
	hashVersion   otlpwire.HashVersion
	byTraceID     bool
	byMetricName  bool
	byStream      bool
	prune         bool
}

// NewRouter returns a Router for s, or an error wrapping ErrInvalidSettings
// (and also otlpwire.ErrHashVersion when s.HashVersion is not a defined
// version).
func NewRouter(s RouterSettings) (*Router, error) {
	// Plain ifs rather than a switch: coverage profiles do not count case
	// expressions, so mutation testing could not see these checks run.
	if !s.HashVersion.Valid() {
		return nil, fmt.Errorf("%w: %w %d", ErrInvalidSettings, otlpwire.ErrHashVersion, s.HashVersion)
	}
	if s.Shards < 1 {
		return nil, fmt.Errorf("%w: %d shards, want at least 1", ErrInvalidSettings, s.Shards)
	}
	if s.MaxFrameBytes < 1 || s.MaxFrameBytes > sdp.MaxArrayLen {
		return nil, fmt.Errorf("%w: max frame bytes %d outside [1, %d]", ErrInvalidSettings, s.MaxFrameBytes, sdp.MaxArrayLen)
	}
	return &Router{
		static:        StaticMembers(make([]string, s.Shards)),
		attributes:    append([]string(nil), s.Attributes...),
		maxFrameBytes: s.MaxFrameBytes,
		hashVersion:   s.HashVersion,
		byTraceID:     s.ByTraceID,
		byMetricName:  s.ByMetricName,
		byStream:      s.ByStream,
		prune:         s.PruneDictionaries,
	}, nil
}

// Shards returns the number of shards Route maps to.
func (r *Router) Shards() int { return r.static.Len() }

// Unroutable describes a resource that Route could not frame.
type Unroutable struct {
	// Index is the position of the resource in the request (0-based), the
	// same as its index in the pdata ResourceSpans/Metrics/Logs slice.
	Index int
	// Items is the resource's item count.
	Items int
	// Err says why; it wraps otlpwire.ErrItemTooLarge.
	Err error
}

// Route frames every resource of req into dst, replacing what dst held.
// A resource holding an item that cannot fit MaxFrameBytes on its own is
// left out entirely (none of its chunks is kept) and listed in
// dst.Unroutable. A malformed request returns an error wrapping
// otlpwire.ErrMalformed and leaves dst empty.
func (r *Router) Route(req otlpwire.Request, dst *Frames) error {
	return r.RouteTo(req, r.static, dst)
}

// RouteTo is Route over the members of a fleet snapshot instead of the
// Router's fixed shard count: shard i of dst is member i of members. It
// returns ErrNoMembers, leaving dst empty, when members is empty. The
// routing key of a resource, and so its member, is computed as by Route;
// only the step from key to member is the snapshot's (Members.Owner).
func (r *Router) RouteTo(req otlpwire.Request, members *Members, dst *Frames) error {
	shards := members.Len()
	dst.reset(shards)
	dst.Members = members
	if shards == 0 {
		return ErrNoMembers
	}
	index := -1
	for rd, err := range req.Resources() {
		if err != nil {
			dst.reset(shards)
			return err
		}
		index++
		if err := r.routeResource(rd, index, members, dst); err != nil {
			dst.reset(shards)
			return err
		}
	}
	dst.group(shards)
	return nil
}

func (r *Router) routeResource(rd otlpwire.ResourceData, index int, members *Members, dst *Frames) error {
	res, err := rd.Resource()
	if err != nil {
		return err
	}
	identity, err := res.HashWith(r.hashVersion)
	if err != nil {
		return err
	}
	key, err := r.key(res, identity)
	if err != nil {
		return err
	}
	if r.byItem(rd.Signal()) {
		return r.routeByTrace(rd, index, members, dst, identity, key)
	}
	shard := members.Owner(key)
	frame := sdp.ResourceFrame{
		Signal:       uint8(rd.Signal()),
		Shard:        uint32(shard),
		ResourceHash: identity,
	}
	if r.prune && rd.Signal() == otlpwire.SignalProfiles {
		done, err := r.prunedFrame(rd, &frame, shard, key, dst)
		if done || err != nil {
			return err
		}
	}
	if otlpwire.RequestSize(rd) <= r.maxFrameBytes {
		// The common case: the resource fits one frame, built in place.
		items, err := otlpwire.WholeItemCount(rd)
		if err != nil {
			return err
		}
		b, err := dst.wholeFrame(&frame, rd, items)
		if err != nil {
			return err
		}
		dst.add(shard, Frame{Bytes: b, Items: items, Key: key})
		dst.Resources++
		return nil
	}
	// A chunk is never larger than MaxFrameBytes (plus the envelope
	// SplitResource adds); a scratch that size keeps splitting free of
	// allocations across requests.
	if want := r.maxFrameBytes + scratchSlack; cap(dst.scratch) < want {
		dst.scratch = make([]byte, 0, want)
	}
	sink := dst.chunkSink()
	sink.frame = frame
	sink.shard, sink.key, sink.err = shard, key, nil
	mark := len(dst.routed)
	// The sequence is called with a yield function kept in dst rather than
	// ranged over: a range loop's body closure would escape into the
	// iterator and cost several allocations per resource.
	otlpwire.SplitResource(rd, r.maxFrameBytes, dst.scratch[:0])(sink.yield)
	return dst.settleResource(rd, index, mark, sink.err)
}

// settleResource ends the framing of resource index, whose frames start at
// routed[mark]: counted when err is nil; left out and listed in Unroutable,
// none of its frames kept, when an item did not fit (so that a resource is
// forwarded whole or not at all); any other error is returned.
func (f *Frames) settleResource(rd otlpwire.ResourceData, index, mark int, err error) error {
	if err == nil {
		f.Resources++
		return nil
	}
	if !errors.Is(err, otlpwire.ErrItemTooLarge) {
		return err
	}
	clear(f.routed[mark:])
	f.routed = f.routed[:mark]
	items, countErr := rd.ItemCount()
	if countErr != nil {
		return countErr
	}
	f.Unroutable = append(f.Unroutable, Unroutable{Index: index, Items: items, Err: err})
	return nil
}

// byItem says whether the items of signal are routed one by one (by trace
// id or metric name) rather than by resource.
func (r *Router) byItem(signal otlpwire.Signal) bool {
	switch signal {
	case otlpwire.SignalMetrics:
		return r.byMetricName || r.byStream
	case otlpwire.SignalProfiles:
		// A sample's trace lives in the request's dictionary (its link):
		// profiles go by resource whatever the key.
		return false
	}
	return r.byTraceID
}

// defaultKey is the routing key of a resource that carries none of the
// routing attributes. Jump(defaultKey, n) is DefaultShard for every n, so a
// static snapshot keeps such resources on shard 0; a fleet keeps them
// together on one member, the one that owns this key.
const defaultKey = 0

// key returns the routing key of a resource whose identity hash is
// identity.
func (r *Router) key(res otlpwire.Resource, identity uint64) (uint64, error) {
	if len(r.attributes) == 0 {
		return identity, nil
	}
	key, found, err := res.HashKeysWith(r.hashVersion, r.attributes)
	if err != nil {
		return 0, err
	}
	if found == 0 {
		return defaultKey, nil
	}
	return key, nil
}

// FrameKey returns the routing key of the resource in frame, an encoded
// ResourceFrame that a Router with the same settings produced: the key Route
// recorded beside it in Frames. It lets a frame kept without its key (in a
// persistent queue) be assigned to a member again. It decodes the frame, so
// it is meant for such rare paths, not for routing.
func (r *Router) FrameKey(frame []byte) (uint64, error) {
	msg, n, err := sdp.Decode(frame)
	if err != nil {
		return 0, err
	}
	rf, ok := msg.(*sdp.ResourceFrame)
	if !ok || n != len(frame) {
		return 0, fmt.Errorf("%w: not one whole ResourceFrame", sdp.ErrInvalidData)
	}
	byItem := r.byItem(otlpwire.Signal(rf.Signal))
	if len(r.attributes) == 0 && !byItem {
		return rf.ResourceHash, nil
	}
	req := otlpwire.NewRequest(otlpwire.Signal(rf.Signal), rf.OTLP)
	for rd, err := range req.Resources() {
		if err != nil {
			return 0, err
		}
		if byItem && r.byStream && rd.Signal() == otlpwire.SignalMetrics {
			return firstStreamKey(rd, rf.ResourceHash)
		}
		if byItem {
			if key, ok, err := firstItemKey(rd); err != nil || ok {
				return key, err
			}
		}
		res, err := rd.Resource()
		if err != nil {
			return 0, err
		}
		return r.key(res, rf.ResourceHash)
	}
	return 0, fmt.Errorf("%w: the frame holds no resource", otlpwire.ErrMalformed)
}
