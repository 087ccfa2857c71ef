// SPDX-License-Identifier: Apache-2.0

package sdp

import (
	"encoding/binary"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The package's copy of the frame schema, otlp_frames.sdp, is the contract
// the codec implements. These tests read that copy (never anything outside
// the repository) and decode what the Go encoder writes with a reader driven
// only by the schema's field types, so the codec and the schema file cannot
// drift apart: a field added, removed, retyped or reordered in either fails.

type schemaField struct{ name, typ string }

type schemaStruct struct {
	name   string
	fields []schemaField
}

var (
	structLine = regexp.MustCompile(`^struct\s+(\w+)\s*\{$`)
	fieldLine  = regexp.MustCompile(`^(\w+)\s*:\s*([^,]+?)\s*,?$`)
)

// parseSchema reads the structs of an SDP schema in order, ignoring comments.
func parseSchema(t *testing.T, src []byte) []schemaStruct {
	t.Helper()
	var structs []schemaStruct
	var open *schemaStruct
	for i, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		switch m := structLine.FindStringSubmatch(line); {
		case m != nil && open == nil:
			structs = append(structs, schemaStruct{name: m[1]})
			open = &structs[len(structs)-1]
		case line == "}" && open != nil:
			open = nil
		case open != nil && fieldLine.MatchString(line):
			f := fieldLine.FindStringSubmatch(line)
			open.fields = append(open.fields, schemaField{f[1], f[2]})
		default:
			t.Fatalf("schema line %d not understood: %q", i+1, line)
		}
	}
	if open != nil {
		t.Fatalf("schema ends inside struct %s", open.name)
	}
	return structs
}

func loadSchema(t *testing.T) []schemaStruct {
	t.Helper()
	src, err := os.ReadFile("otlp_frames.sdp")
	if err != nil {
		t.Fatal(err)
	}
	structs := parseSchema(t, src)
	if len(structs) == 0 {
		t.Fatal("otlp_frames.sdp holds no structs")
	}
	return structs
}

// decodeBySchema reads payload field by field as the schema's types say and
// renders each field as name=value, failing on a short or over-long payload.
func decodeBySchema(s schemaStruct, payload []byte) (map[string]string, error) {
	out := make(map[string]string, len(s.fields))
	p := payload
	for _, f := range s.fields {
		need := func(n int) error {
			if len(p) < n {
				return fmt.Errorf("%s.%s: payload ends %d bytes early", s.name, f.name, n-len(p))
			}
			return nil
		}
		var v string
		switch f.typ {
		case "u8":
			if err := need(1); err != nil {
				return nil, err
			}
			v, p = fmt.Sprint(p[0]), p[1:]
		case "u16":
			if err := need(2); err != nil {
				return nil, err
			}
			v, p = fmt.Sprint(binary.LittleEndian.Uint16(p)), p[2:]
		case "u32":
			if err := need(4); err != nil {
				return nil, err
			}
			v, p = fmt.Sprint(binary.LittleEndian.Uint32(p)), p[4:]
		case "u64":
			if err := need(8); err != nil {
				return nil, err
			}
			v, p = fmt.Sprint(binary.LittleEndian.Uint64(p)), p[8:]
		case "str", "[]u8":
			if err := need(4); err != nil {
				return nil, err
			}
			n := int(binary.LittleEndian.Uint32(p))
			p = p[4:]
			if err := need(n); err != nil {
				return nil, err
			}
			v, p = string(p[:n]), p[n:]
		default:
			return nil, fmt.Errorf("%s.%s: schema type %q not known to this test", s.name, f.name, f.typ)
		}
		out[f.name] = v
	}
	if len(p) != 0 {
		return nil, fmt.Errorf("%s: %d bytes left after the schema's last field", s.name, len(p))
	}
	return out, nil
}

func TestCodecFollowsSchema(t *testing.T) {
	structs := loadSchema(t)
	hello := &Hello{ProtocolVersion: 1, Sender: "collector-a", Shard: 3, ShardCount: 8}
	frame := &ResourceFrame{Sequence: 42, Signal: 2, Shard: 3, ResourceHash: 0x1122334455667788, ItemCount: 17, OTLP: []byte("otlp-bytes")}
	ack := &Ack{Sequence: 42, Status: AckRetry, Detail: "sidecar busy"}

	cases := map[string]struct {
		typeID uint16
		encode func() ([]byte, error)
		want   map[string]string
	}{
		"Hello": {TypeHello, func() ([]byte, error) { return hello.AppendFrame(nil) }, map[string]string{
			"protocol_version": "1", "sender": "collector-a", "shard": "3", "shard_count": "8"}},
		"ResourceFrame": {TypeResourceFrame, func() ([]byte, error) { return frame.AppendFrame(nil) }, map[string]string{
			"sequence": "42", "signal": "2", "shard": "3", "resource_hash": fmt.Sprint(uint64(0x1122334455667788)),
			"item_count": "17", "otlp": "otlp-bytes"}},
		"Ack": {TypeAck, func() ([]byte, error) { return ack.AppendFrame(nil) }, map[string]string{
			"sequence": "42", "status": fmt.Sprint(uint8(AckRetry)), "detail": "sidecar busy"}},
	}
	if len(structs) != len(cases) {
		t.Fatalf("otlp_frames.sdp has %d structs, the codec implements %d", len(structs), len(cases))
	}
	for i, s := range structs {
		c, ok := cases[s.name]
		if !ok {
			t.Errorf("schema struct %s has no Go codec", s.name)
			continue
		}
		// The type ID is the struct's 1-based position in the schema.
		if int(c.typeID) != i+1 {
			t.Errorf("%s is struct %d of the schema but has Go type ID %d", s.name, i+1, c.typeID)
		}
		b, err := c.encode()
		if err != nil {
			t.Fatalf("%s: encode: %v", s.name, err)
		}
		h, err := ParseHeader(b)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if h.Type != c.typeID {
			t.Errorf("%s: header type ID %d, want %d", s.name, h.Type, c.typeID)
		}
		got, err := decodeBySchema(s, b[HeaderSize:])
		if err != nil {
			t.Errorf("decoding the encoder's %s by the schema: %v", s.name, err)
			continue
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: the schema has fields %v, the test expects %d", s.name, s.fields, len(c.want))
		}
		for name, want := range c.want {
			if got[name] != want {
				t.Errorf("%s.%s = %q by the schema, want %q", s.name, name, got[name], want)
			}
		}
	}
}
