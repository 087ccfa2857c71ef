// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"encoding/binary"
	"hash/fnv"
	"strings"
	"testing"
)

// TestHashV1LongLengths: HashV1 writes lengths as uvarints (package
// documentation), so keys and strings of 128 bytes and more, whose lengths
// take two bytes, hash as documented. TestHashMatchesSpec covers one-byte
// lengths only.
func TestHashV1LongLengths(t *testing.T) {
	attr := func(k, v string) uint64 {
		b := binary.AppendUvarint(nil, uint64(len(k)))
		b = append(b, k...)
		b = append(b, 1)
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
		h := fnv.New64a()
		h.Write(b)
		return mix64(h.Sum64())
	}
	golden := uint64(0x9e3779b97f4a7c15)
	for _, n := range []int{127, 128, 129, 200, 16383, 16384} {
		k, v := strings.Repeat("k", n), strings.Repeat("v", n)
		want := mix64(attr(k, "x") + attr("key", v) + 2*golden)
		h, err := NewResource(goldenResource(strAttr(k, "x"), strAttr("key", v))).Hash()
		if err != nil || h != want {
			t.Errorf("lengths of %d bytes: Hash = %#x, %v; the documented algorithm gives %#x", n, h, err, want)
		}
	}
}
