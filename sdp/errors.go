// SPDX-License-Identifier: Apache-2.0

package sdp

import "errors"

// The sentinel errors name the failure kinds of SDP's reference decoders;
// their texts are the reference Go decoder's messages. Errors returned by
// this package wrap one of them with detail, so match them with errors.Is.
var (
	// ErrUnexpectedEnd reports input that ends before the value it declares.
	ErrUnexpectedEnd = errors.New("sdp: unexpected end of data")
	// ErrBadMagic reports a frame that does not start with "SDP".
	ErrBadMagic = errors.New("sdp: invalid magic bytes (expected 'SDP')")
	// ErrBadVersion reports a frame whose version byte is not '2'.
	ErrBadVersion = errors.New("sdp: unsupported protocol version")
	// ErrUnknownType reports a frame whose type ID names no struct of the schema.
	ErrUnknownType = errors.New("sdp: unknown message type ID")
	// ErrArrayTooLarge reports an array count over MaxArrayLen.
	ErrArrayTooLarge = errors.New("sdp: array count exceeds per-array limit")
	// ErrTooManyElements reports arrays that together exceed MaxTotalElements.
	ErrTooManyElements = errors.New("sdp: total elements exceed limit")
	// ErrTooLarge reports a value over MaxValueSize, or a frame over a
	// Reader's maximum frame size.
	ErrTooLarge = errors.New("sdp: data exceeds 128MB limit")
	// ErrInvalidData reports bytes no reference encoder writes: a bool or
	// presence byte other than 0 or 1, trailing bytes inside a payload, or a
	// buffer that is not the frame an operation expects.
	ErrInvalidData = errors.New("sdp: invalid or corrupted data")
	// ErrInvalidUTF8 reports a str value that is not valid UTF-8.
	ErrInvalidUTF8 = errors.New("sdp: invalid UTF-8 string")
)
