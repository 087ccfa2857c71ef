// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// msg encodes a LEN field num holding the concatenation of parts.
func msg(num int, parts ...[]byte) []byte {
	body := bytes.Join(parts, nil)
	out := appendVarint(nil, uint64(num)<<3|wireLen)
	out = appendVarint(out, uint64(len(body)))
	return append(out, body...)
}

func varintField(num int, v uint64) []byte {
	return appendVarint(appendVarint(nil, uint64(num)<<3|wireVarint), v)
}

// The errors for another layout name what was seen, and match
// ErrMalformed exactly when pdata would reject the bytes too.
func TestProfilesVersionErrors(t *testing.T) {
	inProfile := func(fields ...[]byte) []byte { return msg(1, msg(2, msg(2, bytes.Join(fields, nil)))) }
	for _, c := range []struct {
		name      string
		b         []byte
		malformed bool
		says      []string
	}{
		{"v1.9 sample attribute_indices", inProfile(msg(2, msg(3, []byte{1, 2}))), true,
			[]string{"Sample at byte 0", "field 3 with wire type LEN", "has VARINT", ProfilesProtoVersion}},
		{"v1.8 profile attribute_indices", inProfile(msg(12, []byte{1})), false,
			[]string{"Profile at byte 0", "field 12 with wire type LEN", "does not define"}},
		{"v1.7 location_indices", inProfile(msg(3, []byte{1})), true,
			[]string{"Profile", "field 3 with wire type LEN", "has I64"}},
		{"request field 1000", msg(1000, nil), false, []string{"ExportProfilesServiceRequest", "field 1000"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewRequest(SignalProfiles, c.b).ItemCount()
			if !errors.Is(err, ErrProfilesVersion) || errors.Is(err, ErrMalformed) != c.malformed {
				t.Fatalf("%v: want ErrProfilesVersion, ErrMalformed %v", err, c.malformed)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("%T is not a *ParseError", err)
			}
			for _, s := range c.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q does not say %q", err, s)
				}
			}
			if !strings.HasPrefix(err.Error(), "otlpwire: profiles of another proto version: ") {
				t.Errorf("%q", err)
			}
		})
	}
	// The same bytes are a fine request of another signal: only the
	// profiles layout is strict.
	if _, err := NewRequest(SignalTraces, msg(1000, nil)).ItemCount(); err != nil {
		t.Fatal(err)
	}
}

// A ResourceData made by NewProfilesResourceData carries its dictionary
// into the requests built for it; one made by NewResourceData has none.
func TestNewProfilesResourceData(t *testing.T) {
	res := msg(2, msg(2, msg(2, varintField(1, 1)))) // ResourceProfiles: a scope, a profile, a sample
	dict := bytes.Join([][]byte{msg(5, nil), msg(5, []byte("main")), msg(7), msg(7, varintField(1, 1))}, nil)
	rd := NewProfilesResourceData(res, dict)
	b := AppendRequest(nil, rd)
	if len(b) != RequestSize(rd) || !bytes.HasSuffix(b, msg(2, dict)) {
		t.Fatalf("request % x lacks the dictionary", b)
	}
	if n, err := NewRequest(SignalProfiles, b).ItemCount(); err != nil || n != 1 {
		t.Fatalf("ItemCount = %d, %v", n, err)
	}
	bare := NewResourceData(SignalProfiles, res)
	if got := AppendRequest(nil, bare); !bytes.Equal(got, AppendResource(nil, bare)) || RequestSize(bare) != len(got) {
		t.Fatalf("a resource without dictionary: % x", got)
	}
	if n, err := NewRequest(SignalTraces, b).ProfileCount(); !errors.Is(err, ErrWrongSignal) || n != 0 {
		t.Fatalf("ProfileCount of traces: %d, %v", n, err)
	}
	if _, err := NewResourceData(Signal(9), res).ProfileCount(); !errors.Is(err, ErrUnknownSignal) {
		t.Fatalf("ProfileCount of an unknown signal: %v", err)
	}
	if _, err := AppendRequestPruned(nil, NewResourceData(Signal(9), res), &PruneScratch{}); !errors.Is(err, ErrUnknownSignal) {
		t.Fatalf("AppendRequestPruned of an unknown signal: %v", err)
	}
}
