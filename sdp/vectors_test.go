// SPDX-License-Identifier: Apache-2.0

package sdp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

type vector struct {
	File        string         `json:"file"`
	Kind        string         `json:"kind"`
	Fields      map[string]any `json:"fields"`
	ExpectError string         `json:"expect_error"`
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "vectors", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var vs []vector
	if err := dec.Decode(&vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 {
		t.Fatal("vectors.json lists no vectors")
	}
	return vs
}

func readVector(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "vectors", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fieldUint reads a numeric field of vectors.json, given as a number or as a
// "0x..." string.
func fieldUint(t *testing.T, v vector, name string) uint64 {
	t.Helper()
	raw, ok := v.Fields[name]
	if !ok {
		t.Fatalf("%s: field %s missing from vectors.json", v.File, name)
	}
	var s string
	switch x := raw.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = x
	default:
		t.Fatalf("%s: field %s has type %T", v.File, name, raw)
	}
	n, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		t.Fatalf("%s: field %s: %v", v.File, name, err)
	}
	return n
}

func fieldString(t *testing.T, v vector, name string) string {
	t.Helper()
	s, ok := v.Fields[name].(string)
	if !ok {
		t.Fatalf("%s: string field %s missing from vectors.json", v.File, name)
	}
	return s
}

// referenceErrors maps the reference Go decoder's messages to our sentinels.
var referenceErrors = map[string]error{
	"unexpected end of data":               ErrUnexpectedEnd,
	"invalid magic bytes (expected 'SDP')": ErrBadMagic,
	"unsupported protocol version":         ErrBadVersion,
	"unknown message type ID":              ErrUnknownType,
	"array count exceeds per-array limit":  ErrArrayTooLarge,
	"total elements exceed limit":          ErrTooManyElements,
	"data exceeds 128MB limit":             ErrTooLarge,
	"invalid or corrupted data":            ErrInvalidData,
	"invalid UTF-8 string":                 ErrInvalidUTF8,
}

func TestSentinelTextsAreTheReferenceMessages(t *testing.T) {
	for msg, sentinel := range referenceErrors {
		if !strings.HasSuffix(sentinel.Error(), msg) {
			t.Errorf("sentinel %q does not carry the reference message %q", sentinel, msg)
		}
	}
}

// encodeMessage re-encodes a decoded message.
func encodeMessage(t testing.TB, msg any) []byte {
	t.Helper()
	var out []byte
	var err error
	switch m := msg.(type) {
	case *Hello:
		out, err = m.AppendFrame(nil)
	case *ResourceFrame:
		out, err = m.AppendFrame(nil)
	case *Ack:
		out, err = m.AppendFrame(nil)
	default:
		t.Fatalf("Decode returned %T", msg)
	}
	if err != nil {
		t.Fatalf("re-encoding %T: %v", msg, err)
	}
	return out
}

// checkedFields lists, per vector kind, the vectors.json fields the check
// functions below compare, so a field added to the contract cannot go
// unchecked.
var checkedFields = map[string][]string{
	"Hello":         {"protocol_version", "sender", "shard", "shard_count"},
	"ResourceFrame": {"sequence", "signal", "shard", "resource_hash", "item_count", "otlp_file", "otlp_len"},
	"Ack":           {"sequence", "status", "detail"},
}

func TestVectors(t *testing.T) {
	kinds := map[string]int{}
	for _, v := range loadVectors(t) {
		kinds[v.Kind]++
		t.Run(v.File, func(t *testing.T) {
			for name := range v.Fields {
				if !slices.Contains(checkedFields[v.Kind], name) {
					t.Fatalf("vectors.json field %q of a %s vector is not checked by this test", name, v.Kind)
				}
			}
			data := readVector(t, v.File)
			switch v.Kind {
			case "Hello":
				checkHelloVector(t, v, data)
			case "ResourceFrame":
				checkResourceFrameVector(t, v, data)
			case "Ack":
				checkAckVector(t, v, data)
			case "stream":
				checkStreamVector(t, data)
			case "malformed":
				checkMalformedVector(t, v, data)
			default:
				t.Fatalf("unknown vector kind %q", v.Kind)
			}
		})
	}
	for _, k := range []string{"Hello", "ResourceFrame", "Ack", "stream", "malformed"} {
		if kinds[k] == 0 {
			t.Errorf("vectors.json has no %s vector", k)
		}
	}
}

// decodeWhole decodes data as exactly one frame of type T.
func decodeWhole[T any](t *testing.T, data []byte) *T {
	t.Helper()
	msg, n, err := Decode(data)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if n != len(data) {
		t.Fatalf("Decode consumed %d of %d bytes", n, len(data))
	}
	m, ok := msg.(*T)
	if !ok {
		t.Fatalf("Decode returned %T", msg)
	}
	return m
}

func checkHelloVector(t *testing.T, v vector, data []byte) {
	h := decodeWhole[Hello](t, data)
	want := Hello{
		ProtocolVersion: uint16(fieldUint(t, v, "protocol_version")),
		Sender:          fieldString(t, v, "sender"),
		Shard:           uint32(fieldUint(t, v, "shard")),
		ShardCount:      uint32(fieldUint(t, v, "shard_count")),
	}
	if *h != want {
		t.Errorf("decoded %+v, want %+v", *h, want)
	}
	checkEncodes(t, &want, data)
}

func checkResourceFrameVector(t *testing.T, v vector, data []byte) {
	f := decodeWhole[ResourceFrame](t, data)
	want := ResourceFrame{
		Sequence:     fieldUint(t, v, "sequence"),
		Signal:       uint8(fieldUint(t, v, "signal")),
		Shard:        uint32(fieldUint(t, v, "shard")),
		ResourceHash: fieldUint(t, v, "resource_hash"),
		ItemCount:    uint32(fieldUint(t, v, "item_count")),
	}
	if _, ok := v.Fields["otlp_file"]; ok {
		want.OTLP = readVector(t, fieldString(t, v, "otlp_file"))
	}
	if n := fieldUint(t, v, "otlp_len"); uint64(len(want.OTLP)) != n {
		t.Fatalf("vectors.json: otlp_len %d, otlp_file holds %d bytes", n, len(want.OTLP))
	}
	if !bytes.Equal(f.OTLP, want.OTLP) {
		t.Errorf("OTLP differs: got %d bytes, want %d", len(f.OTLP), len(want.OTLP))
	}
	if f.Sequence != want.Sequence || f.Signal != want.Signal || f.Shard != want.Shard ||
		f.ResourceHash != want.ResourceHash || f.ItemCount != want.ItemCount {
		t.Errorf("decoded %+v, want %+v", *f, want)
	}
	if len(f.OTLP) > 0 && &f.OTLP[0] != &data[ResourceHeaderSize] {
		t.Error("decoded OTLP does not alias the frame")
	}
	checkEncodes(t, &want, data)

	// The zero-copy path writes the same bytes.
	header, err := want.AppendHeader(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(append(header, want.OTLP...), data) {
		t.Error("AppendHeader + OTLP differs from the vector")
	}
	var buf bytes.Buffer
	if n, err := want.WriteTo(&buf); err != nil || n != int64(len(data)) || !bytes.Equal(buf.Bytes(), data) {
		t.Errorf("WriteTo wrote %d bytes (%v), not the vector", n, err)
	}
	buf.Reset()
	if err := NewWriter(&buf).WriteResourceFrame(&want); err != nil || !bytes.Equal(buf.Bytes(), data) {
		t.Errorf("Writer.WriteResourceFrame: %v, or bytes differ from the vector", err)
	}
	if seq, err := Sequence(data); err != nil || seq != want.Sequence {
		t.Errorf("Sequence = %d, %v; want %d", seq, err, want.Sequence)
	}
}

func checkAckVector(t *testing.T, v vector, data []byte) {
	a := decodeWhole[Ack](t, data)
	want := Ack{
		Sequence: fieldUint(t, v, "sequence"),
		Status:   AckStatus(fieldUint(t, v, "status")),
		Detail:   fieldString(t, v, "detail"),
	}
	if *a != want {
		t.Errorf("decoded %+v, want %+v", *a, want)
	}
	checkEncodes(t, &want, data)
}

// frameEncoder is what the three frame types share.
type frameEncoder interface {
	AppendFrame(dst []byte) ([]byte, error)
	FrameSize() int
}

func checkEncodes(t *testing.T, m frameEncoder, data []byte) {
	t.Helper()
	prefix := []byte("keep")
	got, err := m.AppendFrame(prefix)
	if err != nil {
		t.Fatalf("AppendFrame: %v", err)
	}
	if !bytes.Equal(got[:len(prefix)], prefix) || !bytes.Equal(got[len(prefix):], data) {
		t.Errorf("AppendFrame wrote\n% x\nwant\n% x", got[len(prefix):], data)
	}
	if m.FrameSize() != len(data) {
		t.Errorf("FrameSize = %d, want %d", m.FrameSize(), len(data))
	}
}

func checkStreamVector(t *testing.T, data []byte) {
	wantTypes := []uint16{TypeHello, TypeResourceFrame, TypeResourceFrame}
	var want []any
	for rest := data; len(rest) > 0; {
		msg, n, err := Decode(rest)
		if err != nil {
			t.Fatalf("Decode at offset %d: %v", len(data)-len(rest), err)
		}
		want = append(want, msg)
		rest = rest[n:]
	}
	if len(want) != len(wantTypes) {
		t.Fatalf("stream holds %d frames, want %d", len(want), len(wantTypes))
	}
	hello := readVector(t, "hello.bin")
	traces := readVector(t, "resource_frame_traces.bin")
	logs := readVector(t, "resource_frame_logs.bin")
	if !bytes.Equal(data, bytes.Join([][]byte{hello, traces, logs}, nil)) {
		t.Error("stream is not hello.bin, resource_frame_traces.bin, resource_frame_logs.bin back to back")
	}

	r := NewReader(bytes.NewReader(data), 0)
	for i, typ := range wantTypes {
		h, payload, err := r.Next()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if h.Type != typ {
			t.Fatalf("frame %d has type %d, want %d", i, h.Type, typ)
		}
		var frame []byte
		switch typ {
		case TypeHello:
			var m Hello
			if err := m.DecodePayload(payload); err != nil {
				t.Fatal(err)
			}
			if m != *want[i].(*Hello) {
				t.Errorf("frame %d: %+v, want %+v", i, m, want[i])
			}
			frame = encodeMessage(t, &m)
		case TypeResourceFrame:
			var m ResourceFrame
			if err := m.DecodePayload(payload); err != nil {
				t.Fatal(err)
			}
			if m.Sequence != want[i].(*ResourceFrame).Sequence || !bytes.Equal(m.OTLP, want[i].(*ResourceFrame).OTLP) {
				t.Errorf("frame %d differs from Decode's", i)
			}
			frame = encodeMessage(t, &m)
		}
		if wantFrame := [][]byte{hello, traces, logs}[i]; !bytes.Equal(frame, wantFrame) {
			t.Errorf("frame %d re-encodes differently", i)
		}
	}
	if _, _, err := r.Next(); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
}

func checkMalformedVector(t *testing.T, v vector, data []byte) {
	sentinel, ok := referenceErrors[v.ExpectError]
	if !ok {
		t.Fatalf("no sentinel for reference error %q", v.ExpectError)
	}
	msg, n, err := Decode(data)
	if !errors.Is(err, sentinel) {
		t.Fatalf("Decode: %v (msg %v, n %d), want %v", err, msg, n, sentinel)
	}
	if !strings.Contains(err.Error(), v.ExpectError) {
		t.Errorf("error %q does not carry the reference message %q", err, v.ExpectError)
	}
	if msg != nil || n != 0 {
		t.Errorf("failed Decode returned %v, %d", msg, n)
	}
	for _, other := range referenceErrors {
		if other != sentinel && errors.Is(err, other) {
			t.Errorf("error %q also matches %v", err, other)
		}
	}
}
