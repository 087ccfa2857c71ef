// SPDX-License-Identifier: Apache-2.0

package wirediff

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	. "github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// Protobuf wire types and varints, from protowire: otlpwire keeps its own
// unexported.
const (
	wireVarint = uint8(protowire.VarintType)
	wireI64    = uint8(protowire.Fixed64Type)
	wireLen    = uint8(protowire.BytesType)
	wireI32    = uint8(protowire.Fixed32Type)
)

func appendVarint(b []byte, v uint64) []byte { return protowire.AppendVarint(b, v) }

// reason is a cause of a *ParseError, which otlpwire keeps unexported (callers
// match ErrMalformed) but returns from ParseError.Unwrap: the tests here
// know each cause by its text.
type reason string

func (r reason) Error() string { return string(r) }

const (
	errTruncated    reason = "unexpected end of data"
	errWireType     reason = "wrong wire type"
	errIDLength     reason = "trace or span id has the wrong length"
	errPackedLength reason = "packed fixed64 field length is not a multiple of 8"
)

// hasReason reports whether err is a *ParseError caused by r.
func hasReason(err error, r reason) bool {
	var pe *ParseError
	if !errors.As(err, &pe) {
		return false
	}
	for _, e := range pe.Unwrap() {
		if e != ErrMalformed && e != ErrUnsupported && e.Error() == string(r) {
			return true
		}
	}
	return false
}

// TestReasonsAreOtlpwiresCauses keeps the texts above those of the errors
// otlpwire returns: each is produced here and recognised.
func TestReasonsAreOtlpwiresCauses(t *testing.T) {
	var name, id pb
	name.varintAlways(5, 1)             // name as a varint
	id.bytesAlways(1, make([]byte, 15)) // a trace id of 15 bytes
	for _, c := range []struct {
		b   []byte
		get func(Span) error
		r   reason
	}{
		{name.b, func(s Span) error { _, err := s.Name(); return err }, errWireType},
		{[]byte{0x39, 1, 2}, func(s Span) error { _, err := s.StartTimeUnixNano(); return err }, errTruncated},
		{id.b, func(s Span) error { _, err := s.TraceID(); return err }, errIDLength},
	} {
		if err := c.get(NewSpan(c.b)); !hasReason(err, c.r) {
			t.Errorf("%q: err = %v, want reason %q", c.r, err, c.r)
		}
	}
}
