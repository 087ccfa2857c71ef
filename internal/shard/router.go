// SPDX-License-Identifier: Apache-2.0

package shard

import (
	"bytes"
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
}

// NewRouter returns a Router for s, or an error wrapping ErrInvalidSettings
// (and also otlpwire.ErrHashVersion when s.HashVersion is not a defined
// version).
func NewRouter(s RouterSettings) (*Router, error) {
	switch {
	case !s.HashVersion.Valid():
		return nil, fmt.Errorf("%w: %w %d", ErrInvalidSettings, otlpwire.ErrHashVersion, s.HashVersion)
	case s.Shards < 1:
		return nil, fmt.Errorf("%w: %d shards, want at least 1", ErrInvalidSettings, s.Shards)
	case s.MaxFrameBytes < 1 || s.MaxFrameBytes > sdp.MaxArrayLen:
		return nil, fmt.Errorf("%w: max frame bytes %d outside [1, %d]", ErrInvalidSettings, s.MaxFrameBytes, sdp.MaxArrayLen)
	}
	return &Router{
		static:        StaticMembers(make([]string, s.Shards)),
		attributes:    append([]string(nil), s.Attributes...),
		maxFrameBytes: s.MaxFrameBytes,
		hashVersion:   s.HashVersion,
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

// Frame is one encoded SDP ResourceFrame and the number of items (spans,
// metric data points or log records) it carries. Bytes is memory of its
// own, shared with nothing else: a heap allocation of exactly the frame's
// length and capacity, or a buffer from Frames.Alloc. Whoever keeps the
// frame (a transport queue until the sidecar acknowledges it) keeps those
// bytes alive and no more, and may write into them. The Frame values
// themselves live in an array that Frames reuses.
type Frame struct {
	Bytes []byte
	Items int
	// Key is the routing key of the frame's resource.
	Key uint64
}

// Frames holds the result of Route. Reuse one Frames for successive
// requests to keep its scratch space and the frame array behind ByShard
// (ByShard is valid until the next Route); the frame bytes themselves are
// new for every request, one allocation (or one buffer from Alloc) per
// frame, because the transport keeps each frame until the sidecar
// acknowledges it.
type Frames struct {
	// Members is the snapshot the frames were routed over; shard i is its
	// member i.
	Members *Members
	// ByShard holds, at index i, the frames for shard i in request order.
	// Each frame's Key is its resource's routing key, so that it can be
	// assigned again when its member leaves (Members.Owner(Key)).
	ByShard [][]Frame
	// Frames, Items and Bytes total what ByShard holds (Bytes counts
	// encoded frames).
	Frames, Items, Bytes int
	// Resources counts the resources that were framed.
	Resources int
	// Unroutable lists resources that could not be framed, in request order.
	Unroutable []Unroutable
	// Alloc, if not nil, provides the memory of each frame: a buffer of
	// length n whose contents are unspecified, which the frame overwrites
	// entirely (a pool that the frames go back to once their sidecar
	// answered them, for example). Its capacity may exceed n. Nil
	// allocates every frame on the heap, at exactly its length.
	Alloc func(n int) []byte

	// head holds a frame's header, and for a whole resource its request's
	// tag and length, before the frame gets its own allocation.
	head    [sdp.ResourceHeaderSize + maxRequestPrefix]byte
	scratch []byte
	routed  []routedFrame
	all     []Frame // backs ByShard
	counts  []int
	sink    *chunkSink
}

// maxRequestPrefix bounds what otlpwire.AppendRequest writes before the
// resource's bytes: a one-byte tag and a varint length.
const maxRequestPrefix = 1 + 10

// routedFrame is one frame in request order with the shard it goes to.
type routedFrame struct {
	shard int
	frame Frame
}

// chunkSink frames the chunks of a resource that SplitResource cuts.
type chunkSink struct {
	frames *Frames
	frame  sdp.ResourceFrame
	shard  int
	key    uint64
	err    error
	yield  func(otlpwire.Chunk, error) bool
}

func (f *Frames) chunkSink() *chunkSink {
	if f.sink == nil {
		f.sink = &chunkSink{frames: f}
		f.sink.yield = f.sink.add
	}
	return f.sink
}

func (s *chunkSink) add(chunk otlpwire.Chunk, err error) bool {
	if err != nil {
		s.err = err
		return false
	}
	f := s.frames
	s.frame.ItemCount = uint32(chunk.ItemCount)
	s.frame.OTLP = chunk.Request
	head, err := s.frame.AppendHeader(f.head[:0:sdp.ResourceHeaderSize])
	s.frame.OTLP = nil
	if err != nil {
		s.err = err
		return false
	}
	// The chunk lives in the scratch, reused for the next one: the frame
	// copies it once, into its own allocation.
	f.add(s.shard, Frame{Bytes: f.own(head, chunk.Request), Items: chunk.ItemCount, Key: s.key})
	return true
}

func (f *Frames) add(shard int, frame Frame) {
	f.routed = append(f.routed, routedFrame{shard: shard, frame: frame})
}

// own returns head followed by more in memory of the frame's own: from
// Alloc when set, else as appendOwned.
func (f *Frames) own(head, more []byte) []byte {
	if f.Alloc == nil {
		return appendOwned(head, more)
	}
	b := f.Alloc(len(head) + len(more))
	copy(b[copy(b, head):], more)
	return b
}

// appendOwned returns b, whose length must be its capacity, followed by
// more, in a new allocation of exactly that length. Growing a full slice
// with append allocates memory that append then fills, where make would
// first zero it.
func appendOwned(b, more []byte) []byte {
	full := len(b)
	b = append(b, more...)
	if cap(b) <= full {
		b = bytes.Clone(b) // more was empty: append kept b's array
	}
	return b[:len(b):len(b)]
}

// wholeFrame encodes frame, whose OTLP is the request holding rd alone, in
// its own allocation, copying rd's bytes once. items must be rd's count as
// otlpwire.WholeItemCount returns it.
func (f *Frames) wholeFrame(frame *sdp.ResourceFrame, rd otlpwire.ResourceData, items int) ([]byte, error) {
	size := otlpwire.RequestSize(rd)
	// AppendHeader takes the OTLP's length from the OTLP itself, so the
	// header is written last, in front of the request in place: head's
	// first bytes go ahead as a placeholder, and the request's tag and
	// length fill head to its capacity, so that appending rd's bytes
	// allocates the frame.
	var b []byte
	if f.Alloc != nil {
		b = otlpwire.AppendRequest(f.Alloc(sdp.ResourceHeaderSize + size)[:sdp.ResourceHeaderSize], rd)
	} else {
		start := f.head[: sdp.ResourceHeaderSize : sdp.ResourceHeaderSize+size-len(rd.Bytes())]
		b = otlpwire.AppendRequest(start, rd)
		if cap(b) <= cap(start) {
			b = bytes.Clone(b) // rd is empty: AppendRequest kept head's array
		}
		b = b[:len(b):len(b)]
	}
	frame.ItemCount = uint32(items)
	frame.OTLP = b[sdp.ResourceHeaderSize:]
	_, err := frame.AppendHeader(b[:0])
	frame.OTLP = nil
	return b, err
}

// scratchSlack covers the request tag and length that a chunk adds around a
// resource, with room to spare.
const scratchSlack = 64

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
	shard := members.Owner(key)
	frame := sdp.ResourceFrame{
		Signal:       uint8(rd.Signal()),
		Shard:        uint32(shard),
		ResourceHash: identity,
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
	if err := sink.err; err != nil {
		if !errors.Is(err, otlpwire.ErrItemTooLarge) {
			return err
		}
		// Drop what was already framed of this resource so that it is
		// either forwarded whole or not at all.
		clear(dst.routed[mark:])
		dst.routed = dst.routed[:mark]
		items, countErr := rd.ItemCount()
		if countErr != nil {
			return countErr
		}
		dst.Unroutable = append(dst.Unroutable, Unroutable{Index: index, Items: items, Err: err})
		return nil
	}
	dst.Resources++
	return nil
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

func (f *Frames) reset(shards int) {
	if cap(f.ByShard) < shards {
		f.ByShard = make([][]Frame, shards)
	}
	f.ByShard = f.ByShard[:shards]
	clear(f.ByShard)
	f.Members = nil
	f.Frames, f.Items, f.Bytes, f.Resources = 0, 0, 0, 0
	f.Unroutable = f.Unroutable[:0]
	clear(f.routed)
	f.routed = f.routed[:0]
}

// Clear drops every reference f holds to the frames of the last Route,
// keeping its scratch space: a Frames kept for reuse (in a sync.Pool) then
// keeps no frame alive after its holder, the transport, lets it go. ByShard
// is empty afterwards.
func (f *Frames) Clear() {
	f.reset(len(f.ByShard))
	clear(f.all)
}

// group lays the routed frames out by shard in one backing array, keeping
// request order within each shard.
func (f *Frames) group(shards int) {
	if len(f.routed) == 0 {
		return
	}
	if cap(f.counts) < shards {
		f.counts = make([]int, shards)
	}
	counts := f.counts[:shards]
	clear(counts)
	for _, rf := range f.routed {
		counts[rf.shard]++
	}
	// The frame array is reused across requests: a caller that keeps frames
	// beyond the next Route copies the Frame values it keeps (see Frames).
	if cap(f.all) < len(f.routed) {
		f.all = make([]Frame, len(f.routed))
	}
	all := f.all[:len(f.routed)]
	clear(all)
	offset := 0
	for shard, n := range counts {
		f.ByShard[shard] = all[offset : offset : offset+n]
		offset += n
	}
	for _, rf := range f.routed {
		f.ByShard[rf.shard] = append(f.ByShard[rf.shard], rf.frame)
		f.Frames++
		f.Items += rf.frame.Items
		f.Bytes += len(rf.frame.Bytes)
	}
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
	if len(r.attributes) == 0 {
		return rf.ResourceHash, nil
	}
	req := otlpwire.NewRequest(otlpwire.Signal(rf.Signal), rf.OTLP)
	for rd, err := range req.Resources() {
		if err != nil {
			return 0, err
		}
		res, err := rd.Resource()
		if err != nil {
			return 0, err
		}
		return r.key(res, rf.ResourceHash)
	}
	return 0, fmt.Errorf("%w: the frame holds no resource", otlpwire.ErrMalformed)
}
