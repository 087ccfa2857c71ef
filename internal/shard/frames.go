// SPDX-License-Identifier: Apache-2.0

package shard

import (
	"bytes"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

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
	// traces and partition serve routing by trace id.
	traces    *traceSink
	partition otlpwire.PartitionScratch
	// prune and pruned serve pruned profiles dictionaries.
	prune  *otlpwire.PruneScratch
	pruned []byte
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
	if err := s.frames.addCopy(&s.frame, s.shard, s.key, chunk.Request, chunk.ItemCount); err != nil {
		s.err = err
		return false
	}
	return true
}

// addCopy adds the frame of req, a request of items items built in scratch
// memory that the next one reuses: the frame copies it once, into its own
// allocation, behind frame's header.
func (f *Frames) addCopy(frame *sdp.ResourceFrame, shard int, key uint64, req []byte, items int) error {
	frame.ItemCount = uint32(items)
	frame.OTLP = req
	head, err := frame.AppendHeader(f.head[:0:sdp.ResourceHeaderSize])
	frame.OTLP = nil
	if err != nil {
		return err
	}
	f.add(shard, Frame{Bytes: f.own(head, req), Items: items, Key: key})
	return nil
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
	switch {
	case f.Alloc != nil:
		b = otlpwire.AppendRequest(f.Alloc(sdp.ResourceHeaderSize + size)[:sdp.ResourceHeaderSize], rd)
	case size-len(rd.Bytes()) > maxRequestPrefix:
		// A profiles resource: its request's dictionary follows its
		// bytes, so the frame is allocated whole, at its exact size.
		b = otlpwire.AppendRequest(make([]byte, sdp.ResourceHeaderSize, sdp.ResourceHeaderSize+size), rd)
	default:
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
