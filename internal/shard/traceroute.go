// SPDX-License-Identifier: Apache-2.0

package shard

import (
	"encoding/binary"
	"math/bits"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// TraceKey is the routing key of a trace id: both halves of the id folded
// into 64 bits and mixed. Its values are part of the routing contract: they
// never change across releases, so that gateways of different versions
// send a trace's items to the same member.
func TraceKey(id [16]byte) uint64 {
	lo := binary.LittleEndian.Uint64(id[:8])
	hi := binary.LittleEndian.Uint64(id[8:])
	return mix64(lo ^ bits.RotateLeft64(hi, 32))
}

// MetricKey is the routing key of a metric name: its 64-bit FNV-1a hash,
// mixed. Like TraceKey, its values never change across releases.
func MetricKey(name []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range name {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return mix64(h)
}

// StreamKey is the routing key of a metric stream of the resource whose
// identity hash is identity: the resource folded into the stream hash that
// otlpwire.PartitionByStream computes (scope, metric name, point
// attributes). Its values never change across releases.
func StreamKey(identity, stream uint64) uint64 {
	return mix64(identity ^ bits.RotateLeft64(stream, 17))
}

// traceSink frames the parts PartitionByTraceID yields for one resource,
// splitting a part larger than MaxFrameBytes as a whole resource is split.
// It lives in Frames so that routing allocates nothing per resource.
type traceSink struct {
	frames  *Frames
	router  *Router
	members *Members
	frame   sdp.ResourceFrame
	// resKey is the resource's own key, which items without a trace id
	// follow; firstKey[m] is the key of member m's first item in the
	// resource, when seen[m].
	resKey   uint64
	firstKey []uint64
	seen     []bool
	err      error
	owner    func([16]byte) int
	byName   func([]byte) int
	byStream func(uint64) int
	identity uint64 // the resource's, for StreamKey
	yield    func(otlpwire.Part, error) bool
}

func (f *Frames) traceSink(r *Router, members *Members) *traceSink {
	if f.traces == nil {
		s := &traceSink{frames: f}
		s.owner = s.ownerOf
		s.byName = s.ownerOfName
		s.byStream = s.ownerOfStream
		s.yield = s.add
		f.traces = s
	}
	s := f.traces
	s.router, s.members, s.err = r, members, nil
	if n := members.Len(); len(s.seen) < n {
		s.seen = make([]bool, n)
		s.firstKey = make([]uint64, n)
	}
	// One mark per member: clearing them costs a few bytes a resource.
	clear(s.seen)
	return s
}

// claim returns the member of key, remembering the first key each member
// gets in the resource.
func (s *traceSink) claim(key uint64) int {
	m := s.members.Owner(key)
	if !s.seen[m] {
		s.seen[m], s.firstKey[m] = true, key
	}
	return m
}

// ownerOf, ownerOfName and ownerOfStream are the owner functions of the
// partitions by trace id, metric name and stream.
func (s *traceSink) ownerOf(id [16]byte) int         { return s.claim(TraceKey(id)) }
func (s *traceSink) ownerOfName(name []byte) int     { return s.claim(MetricKey(name)) }
func (s *traceSink) ownerOfStream(stream uint64) int { return s.claim(StreamKey(s.identity, stream)) }

func (s *traceSink) add(p otlpwire.Part, err error) bool {
	if err != nil {
		s.err = err
		return false
	}
	// The part's frame carries the key of its first item: re-routed after
	// a membership change, the frame goes whole to that key's new owner,
	// so only traces in flight during the change may split.
	key := s.resKey
	if s.seen[p.Owner] {
		key = s.firstKey[p.Owner]
	}
	f := s.frames
	s.frame.Shard = uint32(p.Owner)
	if len(p.Request) <= s.router.maxFrameBytes {
		s.frame.ItemCount = uint32(p.ItemCount)
		s.frame.OTLP = p.Request
		head, err := s.frame.AppendHeader(f.head[:0:sdp.ResourceHeaderSize])
		s.frame.OTLP = nil
		if err != nil {
			s.err = err
			return false
		}
		f.add(p.Owner, Frame{Bytes: f.own(head, p.Request), Items: p.ItemCount, Key: key})
		return true
	}
	for rd, err := range otlpwire.NewRequest(otlpwire.Signal(s.frame.Signal), p.Request).Resources() {
		if err != nil {
			s.err = err
			return false
		}
		sink := f.chunkSink()
		sink.frame = s.frame
		sink.shard, sink.key, sink.err = p.Owner, key, nil
		otlpwire.SplitResource(rd, s.router.maxFrameBytes, f.scratch[:0])(sink.yield)
		if sink.err != nil {
			s.err = sink.err
			return false
		}
	}
	return true
}

// routeByTrace frames the items of rd by trace id (spans, log records) or
// metric name (metrics): each member that owns a trace or metric of the
// resource gets one frame (or, when larger than MaxFrameBytes, several)
// with the resource and its items; items without a trace id go with the
// resource's own key.
func (r *Router) routeByTrace(rd otlpwire.ResourceData, index int, members *Members, dst *Frames, identity, resKey uint64) error {
	if want := r.maxFrameBytes + scratchSlack; cap(dst.scratch) < want {
		dst.scratch = make([]byte, 0, want)
	}
	s := dst.traceSink(r, members)
	s.resKey, s.identity = resKey, identity
	s.frame = sdp.ResourceFrame{Signal: uint8(rd.Signal()), ResourceHash: identity}
	mark := len(dst.routed)
	switch {
	case rd.Signal() == otlpwire.SignalMetrics && r.byStream:
		otlpwire.PartitionByStream(rd, s.byStream, &dst.partition)(s.yield)
	case rd.Signal() == otlpwire.SignalMetrics:
		otlpwire.PartitionByMetricName(rd, s.byName, &dst.partition)(s.yield)
	default:
		otlpwire.PartitionByTraceID(rd, s.owner, members.Owner(resKey), &dst.partition)(s.yield)
	}
	return dst.settleResource(rd, index, mark, s.err)
}

// firstStreamKey returns the key of the first data point (or metric
// without points) of a metrics resource whose identity hash is identity:
// the stream PartitionByStream gives it first (for a resource without any
// metric, the one it gives the whole resource).
func firstStreamKey(rd otlpwire.ResourceData, identity uint64) (uint64, error) {
	var first uint64
	seen := false
	for _, err := range otlpwire.PartitionByStream(rd, func(stream uint64) int {
		if !seen {
			first, seen = stream, true
		}
		return 0
	}, new(otlpwire.PartitionScratch)) {
		if err != nil {
			return 0, err
		}
	}
	return StreamKey(identity, first), nil
}

// firstItemKey returns the key of the first item of rd that has one (a
// trace id; a metric's name), and whether there is one.
func firstItemKey(rd otlpwire.ResourceData) (uint64, bool, error) {
	for sd, err := range rd.Scopes() {
		if err != nil {
			return 0, false, err
		}
		var id [16]byte
		switch rd.Signal() {
		case otlpwire.SignalMetrics:
			for m, err := range sd.Metrics() {
				if err != nil {
					return 0, false, err
				}
				name, err := m.Name()
				if err != nil {
					return 0, false, err
				}
				return MetricKey(name), true, nil
			}
		case otlpwire.SignalTraces:
			for sp, err := range sd.Spans() {
				if err != nil {
					return 0, false, err
				}
				if id, err = sp.TraceID(); err != nil {
					return 0, false, err
				}
				if id != ([16]byte{}) {
					return TraceKey(id), true, nil
				}
			}
		case otlpwire.SignalLogs:
			for lr, err := range sd.LogRecords() {
				if err != nil {
					return 0, false, err
				}
				if id, err = lr.TraceID(); err != nil {
					return 0, false, err
				}
				if id != ([16]byte{}) {
					return TraceKey(id), true, nil
				}
			}
		}
	}
	return 0, false, nil
}
