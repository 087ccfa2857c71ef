// SPDX-License-Identifier: Apache-2.0

package sdp

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

// decoder reads byte-mode fields from one payload. The first failure sticks:
// later reads return zero values, so a struct's decoder checks err once.
type decoder struct {
	buf      []byte
	off      int
	elements int // array elements read so far, against MaxTotalElements
	err      error
}

func newDecoder(payload []byte) (decoder, error) {
	if len(payload) > MaxValueSize {
		return decoder{}, fmt.Errorf("%w: payload of %d bytes", ErrTooLarge, len(payload))
	}
	return decoder{buf: payload}, nil
}

// take returns the next n bytes, capacity-limited so that appending to them
// cannot overwrite what follows.
func (d *decoder) take(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.buf)-d.off {
		d.err = fmt.Errorf("%w: %s needs %d bytes at offset %d, have %d", ErrUnexpectedEnd, what, n, d.off, len(d.buf)-d.off)
		return nil
	}
	b := d.buf[d.off : d.off+n : d.off+n]
	d.off += n
	return b
}

func (d *decoder) u8(what string) uint8 {
	if b := d.take(1, what); b != nil {
		return b[0]
	}
	return 0
}

func (d *decoder) u16(what string) uint16 {
	if b := d.take(2, what); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (d *decoder) u32(what string) uint32 {
	if b := d.take(4, what); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *decoder) u64(what string) uint64 {
	if b := d.take(8, what); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// bytes reads a []u8, aliasing the payload. The count is checked against the
// limits before the bytes are looked at, as the references do.
func (d *decoder) bytes(what string) []byte {
	n := d.u32(what)
	if d.err != nil {
		return nil
	}
	if n > MaxArrayLen {
		d.err = fmt.Errorf("%w: %s has %d elements", ErrArrayTooLarge, what, n)
		return nil
	}
	d.elements += int(n)
	if d.elements > MaxTotalElements {
		d.err = fmt.Errorf("%w: %d elements at %s", ErrTooManyElements, d.elements, what)
		return nil
	}
	return d.take(int(n), what)
}

// str reads a str. It returns prev when the bytes equal it, so decoding into
// a reused struct that receives the same string again allocates nothing.
func (d *decoder) str(what, prev string) string {
	n := d.u32(what)
	if d.err != nil {
		return ""
	}
	if n > MaxValueSize {
		d.err = fmt.Errorf("%w: %s of %d bytes", ErrTooLarge, what, n)
		return ""
	}
	b := d.take(int(n), what)
	if d.err != nil {
		return ""
	}
	if !utf8.Valid(b) {
		d.err = fmt.Errorf("%w: %s", ErrInvalidUTF8, what)
		return ""
	}
	if string(b) == prev {
		return prev
	}
	return string(b)
}

// finish reports the first failure, or trailing bytes: the references ignore
// them, but rejecting them makes every accepted payload re-encode exactly.
func (d *decoder) finish(what string) error {
	if d.err != nil {
		return d.err
	}
	if d.off != len(d.buf) {
		return fmt.Errorf("%w: %d trailing bytes after %s", ErrInvalidData, len(d.buf)-d.off, what)
	}
	return nil
}

// appendStr appends a str; the caller has checked s with checkStr.
func appendStr(dst []byte, s string) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(s)))
	return append(dst, s...)
}

// checkStr refuses what no decoder accepts, so the encoder never writes it.
func checkStr(s, what string) error {
	if len(s) > MaxValueSize {
		return fmt.Errorf("%w: %s of %d bytes", ErrTooLarge, what, len(s))
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: %s", ErrInvalidUTF8, what)
	}
	return nil
}

// checkPayload refuses a payload larger than the decoders accept.
func checkPayload(size int, what string) error {
	if size > MaxValueSize {
		return fmt.Errorf("%w: %s payload of %d bytes", ErrTooLarge, what, size)
	}
	return nil
}
