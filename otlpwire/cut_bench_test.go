// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"fmt"
	"iter"
	"strings"
	"testing"
)

// cutLimit is the chunk size of the cut sweeps.
const cutLimit = 16 << 10

// cutFixture returns one ResourceSpans holding scopes scopes of
// spansPerScope spans, each span carrying a payload attribute of
// payload bytes.
func cutFixture(tb testing.TB, scopes, spansPerScope, payload int) ResourceData {
	tb.Helper()
	pad := strings.Repeat("x", payload)
	str := func(p *pb, num int, key, value string) { // a KeyValue with a string AnyValue
		p.msg(num, func(kv *pb) {
			kv.str(1, key)
			kv.msg(2, func(v *pb) { v.str(1, value) })
		})
	}
	var req pb
	req.msg(1, func(rs *pb) { // ResourceSpans
		rs.msg(1, func(r *pb) { // Resource
			for a := range 10 {
				str(r, 1, fmt.Sprintf("attribute.%d", a), fmt.Sprintf("value-0-%d", a))
			}
		})
		for s := range scopes {
			rs.msg(2, func(ss *pb) { // ScopeSpans
				ss.msg(1, func(sc *pb) { sc.str(1, fmt.Sprintf("scope.%d", s)) })
				for i := range spansPerScope {
					ss.msg(2, func(sp *pb) { // Span
						sp.bytes(1, []byte{byte(s), byte(s >> 8), byte(i), byte(i >> 8), 1, 15: 0})
						sp.bytes(2, []byte{byte(i), 2, 7: 0})
						sp.str(5, "operation")
						sp.fixed64(7, 1e18)
						sp.fixed64(8, 1e18+1000)
						str(sp, 9, "payload", pad)
					})
				}
			})
		}
	})
	for rd, err := range NewRequest(SignalTraces, req.b).Resources() {
		if err != nil {
			tb.Fatal(err)
		}
		return rd
	}
	tb.Fatal("no resource")
	return ResourceData{}
}

// benchCut reports the cost of cutting rd at limit per KB of resource,
// with the current splitter and with the previous one (refSplitResource,
// which re-walked the resource and scope for every chunk).
func benchCut(b *testing.B, rd ResourceData, limit int) {
	buf := make([]byte, 0, 2*limit)
	for _, impl := range []struct {
		name  string
		split func(ResourceData, int, []byte) iter.Seq2[Chunk, error]
	}{{"onepass", SplitResource}, {"previous", refSplitResource}} {
		b.Run(impl.name, func(b *testing.B) {
			b.SetBytes(int64(len(rd.Bytes())))
			b.ReportAllocs()
			chunks := 0
			for b.Loop() {
				chunks = 0
				for _, err := range impl.split(rd, limit, buf) {
					if err != nil {
						b.Fatal(err)
					}
					chunks++
				}
			}
			b.ReportMetric(float64(chunks), "chunks")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(float64(len(rd.Bytes()))/1024), "ns/KB")
		})
	}
	// The floor: copying the same bytes into the same buffer, limit bytes
	// at a time. It shows what the memory hierarchy alone costs per KB at
	// each size (a large resource streams from DRAM, a small one from cache).
	b.Run("memcpy", func(b *testing.B) {
		b.SetBytes(int64(len(rd.Bytes())))
		buf := make([]byte, limit)
		for b.Loop() {
			for src := rd.Bytes(); len(src) > 0; {
				src = src[copy(buf, src):]
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(float64(len(rd.Bytes()))/1024), "ns/KB")
	})
}

// BenchmarkCutChunks sweeps the number of chunks one large scope is cut
// into (about 9 spans of 1.7 KB per 16 KiB chunk): the cost per KB must stay
// flat from 4 to 1,111 chunks.
func BenchmarkCutChunks(b *testing.B) {
	for _, spans := range []int{36, 360, 3600, 10000} {
		rd := cutFixture(b, 1, spans, 1700)
		b.Run(fmt.Sprintf("spans=%d", spans), func(b *testing.B) { benchCut(b, rd, cutLimit) })
	}
}

// BenchmarkCutScopes sweeps the number of one-span scopes of a resource
// cut at 16 KiB: the cost per KB must stay flat from 100 to 10,000 scopes.
func BenchmarkCutScopes(b *testing.B) {
	for _, scopes := range []int{100, 1000, 10000} {
		rd := cutFixture(b, scopes, 1, 100)
		b.Run(fmt.Sprintf("scopes=%d", scopes), func(b *testing.B) { benchCut(b, rd, cutLimit) })
	}
}

// BenchmarkCutLimits cuts the same 10,000-span resource (17 MB) at limits
// from 4.5 MB (4 chunks) down to 4 KiB (about 5,000 chunks): with the
// resource size fixed, the cost per KB shows the cost of the chunk count
// alone, without the cache effects of the size sweep.
func BenchmarkCutLimits(b *testing.B) {
	rd := cutFixture(b, 1, 10000, 1700)
	for _, limit := range []int{4600 << 10, 1 << 20, 64 << 10, 16 << 10, 4 << 10} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) { benchCut(b, rd, limit) })
	}
}
