// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"bytes"
	"testing"
)

// lastID reads every well-formed item whose tags take one byte and whose
// lengths take at most two, and hands everything else to the general
// reader (ok false) without reading past the item: each case below is a
// log record (trace_id is field 9) with what lastID must answer, and
// readTraceID must agree with the general reader on all of them. A loop
// that handed more to the general reader would be as right but slower;
// one that handed less would read what it does not understand.
func TestLastIDReadsWhatItClaims(t *testing.T) {
	id := bytes.Repeat([]byte{0xab}, 16)
	traceID := msg(9, id)
	fixed64 := append([]byte{1<<3 | wireI64}, 1, 2, 3, 4, 5, 6, 7, 8) // time_unix_nano
	fixed32 := append([]byte{8<<3 | wireI32}, 1, 0, 0, 0)             // flags
	// body: a length of exactly 128, in two bytes (0x80 0x01), of zeros,
	// which are no field: a loop that lost its place in it would stop.
	body128 := msg(5, msg(1, make([]byte, 126)))
	if body128[1] != 0x80 || body128[2] != 0x01 {
		t.Fatalf("body128's length is % x, want 80 01", body128[1:3])
	}
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, c := range []struct {
		name string
		b    []byte
		at   int // -1: no trace id, or an empty one
		ok   bool
	}{
		{"every wire type, trace id last", join(fixed64, varintField(2, 9), fixed32, body128, traceID), len(fixed64) + 2 + len(fixed32) + len(body128) + 2, true},
		{"trace id first, fixed64 last", join(traceID, fixed32, fixed64), 2, true},
		{"trace id first, fixed32 last", join(traceID, fixed64, fixed32), 2, true},
		{"varints of two and nine bytes", join(varintField(2, 128), varintField(7, 1<<62), traceID), 3 + 10 + 2, true},
		{"a varint byte of 0x80 inside", join(varintField(2, 16384), traceID), 4 + 2, true},
		{"the last trace id wins", join(traceID, msg(9, bytes.Repeat([]byte{1}, 16))), 18 + 2, true},
		{"an empty last trace id", join(traceID, msg(9)), -1, true},
		{"no trace id", join(fixed64, varintField(2, 9)), -1, true},
		{"empty", nil, -1, true},

		{"a trace id of 8 bytes", msg(9, id[:8]), 0, false},
		{"a LEN tag at the end", join(fixed64, []byte{9<<3 | wireLen}), 0, false},
		{"a two-byte length cut after its first byte", []byte{5<<3 | wireLen, 0x80}, 0, false},
		// Read as a two-byte length of 16384 starting one byte late, this
		// would end on a well-formed varint field (0x10 0x01).
		{"a three-byte length", join([]byte{5<<3 | wireLen, 0x80, 0x80, 0x01}, make([]byte, 16383), []byte{0x10, 0x01}), 0, false},
		{"a field longer than the item", join([]byte{9<<3 | wireLen, 16}, id[:14]), 0, false},
		{"a varint cut at the end", []byte{2<<3 | wireVarint, 0x80}, 0, false},
		{"a varint of eleven bytes", join([]byte{2<<3 | wireVarint}, bytes.Repeat([]byte{0xff}, 10), []byte{0x01}), 0, false},
		{"a fixed64 cut at the end", join([]byte{1<<3 | wireI64}, []byte{1, 2, 3}), 0, false},
		{"a fixed64 cut at the end after a field", join(varintField(2, 9), []byte{1<<3 | wireI64}, []byte{1, 2, 3, 4, 5}), 0, false},
		{"a fixed32 cut at the end", join([]byte{8<<3 | wireI32}, []byte{1, 2, 3}), 0, false},
		{"a two-byte tag", join([]byte{0x80 | 9<<3 | wireLen, 0x00, 16}, id), 0, false},
		{"field 0", []byte{0<<3 | wireVarint, 1}, 0, false},
		{"a field of the wrong type", join([]byte{9<<3 | wireI64}, id[:8]), 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			at, ok := lastID(c.b, &schemaLogRecord, 9, 16)
			if ok != c.ok || (ok && at != c.at) {
				t.Errorf("lastID = %d, %v; want %d, %v", at, ok, c.at, c.ok)
			}
			got, gotErr := readTraceID(c.b, &schemaLogRecord, 9)
			var want [16]byte
			wantErr := readID(c.b, &schemaLogRecord, 9, want[:])
			if wantErr != nil {
				want = [16]byte{}
			}
			if got != want || (gotErr == nil) != (wantErr == nil) {
				t.Errorf("readTraceID = %x, %v; the general reader %x, %v", got, gotErr, want, wantErr)
			}
		})
	}
}
