// SPDX-License-Identifier: Apache-2.0

package sdp

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
)

// Fixed payload sizes: every field except the variable bytes of str and []u8.
const (
	helloFixedSize    = 2 + 4 + 4 + 4
	resourceFixedSize = 8 + 1 + 4 + 8 + 4 + 4
	ackFixedSize      = 8 + 1 + 4
)

// ResourceHeaderSize is the size of what ResourceFrame.AppendHeader writes:
// the frame header and every payload byte before the OTLP bytes.
const ResourceHeaderSize = HeaderSize + resourceFixedSize

// MaxResourceFrameSize is the size of the largest valid ResourceFrame.
const MaxResourceFrameSize = ResourceHeaderSize + MaxArrayLen

// Hello opens a stream: the collector sends it first on every connection.
type Hello struct {
	// ProtocolVersion is the frame protocol version, ProtocolVersion.
	ProtocolVersion uint16
	// Sender is the stable identity of the sending collector.
	Sender string
	// Shard is the shard this connection carries.
	Shard uint32
	// ShardCount is the number of shards the sender routes across.
	ShardCount uint32
}

// FrameSize returns the size of h's encoded frame.
func (h *Hello) FrameSize() int { return HeaderSize + helloFixedSize + len(h.Sender) }

// AppendFrame appends h as a complete frame to dst.
func (h *Hello) AppendFrame(dst []byte) ([]byte, error) {
	if err := checkStr(h.Sender, "Hello.sender"); err != nil {
		return dst, err
	}
	size := helloFixedSize + len(h.Sender)
	if err := checkPayload(size, "Hello"); err != nil {
		return dst, err
	}
	dst = appendHeader(dst, TypeHello, size)
	dst = binary.LittleEndian.AppendUint16(dst, h.ProtocolVersion)
	dst = appendStr(dst, h.Sender)
	dst = binary.LittleEndian.AppendUint32(dst, h.Shard)
	return binary.LittleEndian.AppendUint32(dst, h.ShardCount), nil
}

// DecodePayload decodes a Hello payload, the bytes after the frame header,
// into h. It allocates a copy of the sender unless it equals h.Sender.
func (h *Hello) DecodePayload(payload []byte) error {
	d, err := newDecoder(payload)
	if err != nil {
		return err
	}
	v := Hello{
		ProtocolVersion: d.u16("Hello.protocol_version"),
		Sender:          d.str("Hello.sender", h.Sender),
		Shard:           d.u32("Hello.shard"),
		ShardCount:      d.u32("Hello.shard_count"),
	}
	if err := d.finish("Hello"); err != nil {
		return err
	}
	*h = v
	return nil
}

// ResourceFrame carries one resource's telemetry as a standalone OTLP export
// request.
type ResourceFrame struct {
	// Sequence numbers the frames of a connection: 1 after Hello, then +1.
	Sequence uint64
	// Signal is 1 traces, 2 metrics, 3 logs or 4 profiles.
	Signal uint8
	// Shard is the shard chosen for this resource.
	Shard uint32
	// ResourceHash is the routing hash of the resource identity.
	ResourceHash uint64
	// ItemCount is the number of spans, data points or log records in OTLP.
	ItemCount uint32
	// OTLP is a protobuf Export{Trace,Metrics,Logs}ServiceRequest holding
	// this one resource; at most MaxArrayLen bytes. After DecodePayload it
	// aliases the decoded buffer.
	OTLP []byte
}

// FrameSize returns the size of f's encoded frame.
func (f *ResourceFrame) FrameSize() int { return ResourceHeaderSize + len(f.OTLP) }

// AppendFrame appends f as a complete frame to dst.
func (f *ResourceFrame) AppendFrame(dst []byte) ([]byte, error) {
	dst, err := f.AppendHeader(dst)
	if err != nil {
		return dst, err
	}
	return append(dst, f.OTLP...), nil
}

// AppendHeader appends the frame as far as the OTLP bytes: the frame header,
// the fixed fields and the OTLP count. Writing those bytes and then f.OTLP
// sends the frame without copying its payload; see WriteTo.
func (f *ResourceFrame) AppendHeader(dst []byte) ([]byte, error) {
	if len(f.OTLP) > MaxArrayLen {
		return dst, fmt.Errorf("%w: ResourceFrame.otlp of %d bytes", ErrArrayTooLarge, len(f.OTLP))
	}
	dst = appendHeader(dst, TypeResourceFrame, resourceFixedSize+len(f.OTLP))
	dst = binary.LittleEndian.AppendUint64(dst, f.Sequence)
	dst = append(dst, f.Signal)
	dst = binary.LittleEndian.AppendUint32(dst, f.Shard)
	dst = binary.LittleEndian.AppendUint64(dst, f.ResourceHash)
	dst = binary.LittleEndian.AppendUint32(dst, f.ItemCount)
	return binary.LittleEndian.AppendUint32(dst, uint32(len(f.OTLP))), nil
}

// WriteTo writes f to w as one frame without copying f.OTLP: a net.Conn
// receives the header and the payload in one vectored write. It implements
// io.WriterTo.
func (f *ResourceFrame) WriteTo(w io.Writer) (int64, error) {
	var hdr [ResourceHeaderSize]byte
	b, err := f.AppendHeader(hdr[:0])
	if err != nil {
		return 0, err
	}
	bufs := net.Buffers{b, f.OTLP}
	return bufs.WriteTo(w)
}

// DecodePayload decodes a ResourceFrame payload, the bytes after the frame
// header, into f without allocating: f.OTLP aliases payload, so it is valid
// only as long as payload is.
func (f *ResourceFrame) DecodePayload(payload []byte) error {
	d, err := newDecoder(payload)
	if err != nil {
		return err
	}
	v := ResourceFrame{
		Sequence:     d.u64("ResourceFrame.sequence"),
		Signal:       d.u8("ResourceFrame.signal"),
		Shard:        d.u32("ResourceFrame.shard"),
		ResourceHash: d.u64("ResourceFrame.resource_hash"),
		ItemCount:    d.u32("ResourceFrame.item_count"),
		OTLP:         d.bytes("ResourceFrame.otlp"),
	}
	if err := d.finish("ResourceFrame"); err != nil {
		return err
	}
	*f = v
	return nil
}

// AckStatus says how the sidecar settled frames.
type AckStatus uint8

// Ack statuses.
const (
	// AckAccepted: the frames were taken.
	AckAccepted AckStatus = 0
	// AckRetry: the frames were not taken; send them again later.
	AckRetry AckStatus = 1
	// AckRejected: the frames were refused for good.
	AckRejected AckStatus = 2
)

// String returns "accepted", "retry" or "rejected", or the number of a status
// the schema does not define.
func (s AckStatus) String() string {
	switch s {
	case AckAccepted:
		return "accepted"
	case AckRetry:
		return "retry"
	case AckRejected:
		return "rejected"
	}
	return "AckStatus(" + strconv.Itoa(int(s)) + ")"
}

// Ack settles every frame of a connection up to and including Sequence.
type Ack struct {
	// Sequence is the last settled frame.
	Sequence uint64
	// Status says how the frames were settled.
	Status AckStatus
	// Detail says why when Status is not AckAccepted.
	Detail string
}

// FrameSize returns the size of a's encoded frame.
func (a *Ack) FrameSize() int { return HeaderSize + ackFixedSize + len(a.Detail) }

// AppendFrame appends a as a complete frame to dst.
func (a *Ack) AppendFrame(dst []byte) ([]byte, error) {
	if err := checkStr(a.Detail, "Ack.detail"); err != nil {
		return dst, err
	}
	size := ackFixedSize + len(a.Detail)
	if err := checkPayload(size, "Ack"); err != nil {
		return dst, err
	}
	dst = appendHeader(dst, TypeAck, size)
	dst = binary.LittleEndian.AppendUint64(dst, a.Sequence)
	dst = append(dst, uint8(a.Status))
	return appendStr(dst, a.Detail), nil
}

// DecodePayload decodes an Ack payload, the bytes after the frame header,
// into a. It allocates a copy of the detail unless it is empty or equals
// a.Detail.
func (a *Ack) DecodePayload(payload []byte) error {
	d, err := newDecoder(payload)
	if err != nil {
		return err
	}
	v := Ack{
		Sequence: d.u64("Ack.sequence"),
		Status:   AckStatus(d.u8("Ack.status")),
		Detail:   d.str("Ack.detail", a.Detail),
	}
	if err := d.finish("Ack"); err != nil {
		return err
	}
	*a = v
	return nil
}
