// SPDX-License-Identifier: Apache-2.0

package wirediff

// pb is a minimal protobuf writer that emits fields in ascending field
// order, for tests that build malformed or unusual inputs by hand;
// internal/sdkenc has the same writer behind its SDK-ordered encoder.
type pb struct {
	b []byte
}

func (p *pb) tag(num int, typ uint8) { p.b = appendVarint(p.b, uint64(num)<<3|uint64(typ)) }

func (p *pb) varint(num int, v uint64) {
	if v != 0 {
		p.varintAlways(num, v)
	}
}

func (p *pb) varintAlways(num int, v uint64) {
	p.tag(num, wireVarint)
	p.b = appendVarint(p.b, v)
}

func (p *pb) fixed64(num int, v uint64) {
	if v != 0 {
		p.fixed64Always(num, v)
	}
}

func (p *pb) fixed64Always(num int, v uint64) {
	p.tag(num, wireI64)
	for i := range 8 {
		p.b = append(p.b, byte(v>>(8*i)))
	}
}

func (p *pb) fixed32(num int, v uint32) {
	if v != 0 {
		p.tag(num, wireI32)
		p.b = append(p.b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
}

func (p *pb) bytes(num int, b []byte) {
	if len(b) > 0 {
		p.bytesAlways(num, b)
	}
}

func (p *pb) bytesAlways(num int, b []byte) {
	p.tag(num, wireLen)
	p.b = appendVarint(p.b, uint64(len(b)))
	p.b = append(p.b, b...)
}

func (p *pb) str(num int, s string) { p.bytes(num, []byte(s)) }

func (p *pb) msg(num int, fn func(*pb)) {
	var q pb
	fn(&q)
	p.bytesAlways(num, q.b)
}

func zigzag32(v int32) uint64 { return uint64(uint32((v << 1) ^ (v >> 31))) }
