// SPDX-License-Identifier: Apache-2.0

// Package sdp encodes and decodes the frames that otelcol-sdp exchanges with
// its sidecar: the structs of otlp_frames.sdp in SDP (Serial Data Protocol)
// message mode, byte for byte what SDP's generated Go, Rust, C++ and Swift
// code writes and reads.
//
// A frame is a 10-byte header (magic "SDP", version '2', u16 type ID, u32
// payload length, little-endian) followed by the byte-mode payload: the
// struct's fields back to back in schema order. See README.md for the
// contract and the guarantees.
//
// Encoding appends to a caller's buffer and allocates nothing when the
// buffer has room. Decoding enforces the reference limits and rejects
// anything a reference encoder would not have written, including trailing
// bytes inside a payload, so every accepted frame re-encodes to the same
// bytes.
//
// # Stability
//
// The module (sdp and sdp/transport) is at v0.x. The frame format of
// otlp_frames.sdp is the contract with sidecars written in other languages
// and changes only with a new schema version. In Go, the part of the API
// that otelcol-sdp's processor and reference sidecar use is stable: it
// changes only with a deprecation first, recorded in CHANGELOG.md; the rest
// is experimental and may still change in a minor release.
//
// Stable in package sdp: [Hello], [ResourceFrame] and [Ack] with their
// FrameSize, AppendFrame and DecodePayload methods; [AckStatus] with
// [AckAccepted], [AckRetry] and [AckRejected]; [Decode]; [NewReader] and
// [Reader]; [HeaderSize], [DefaultMaxFrameSize] and [MaxArrayLen].
// Experimental: the rest ([Writer], [ParseHeader], [SetSequence],
// [Sequence], [FrameSizeError], [TypeName], the other limits).
//
// Stable in package transport: see that package's documentation.
package sdp
