// SPDX-License-Identifier: Apache-2.0

package sdkenc

import (
	"bytes"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func fillAttrs(m pcommon.Map) {
	m.PutStr("s", "v")
	m.PutInt("i", -7)
	m.PutDouble("d", 1.5)
	m.PutBool("b", true)
	m.PutEmptyBytes("y").FromRaw([]byte{1, 2})
	m.PutEmptySlice("a").AppendEmpty().SetStr("x")
	m.PutEmptyMap("m").PutInt("k", 1)
}

// What the encoder writes, pdata reads back as what it was given: the
// same request pdata itself would encode.
func TestEncodingsReadBackAsTheirInput(t *testing.T) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	fillAttrs(rs.Resource().Attributes())
	rs.SetSchemaUrl("https://schema/r")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("scope")
	ss.Scope().SetVersion("1")
	sp := ss.Spans().AppendEmpty()
	sp.SetName("span")
	sp.SetTraceID(pcommon.TraceID{1, 2, 3})
	sp.SetSpanID(pcommon.SpanID{4})
	sp.SetStartTimestamp(10)
	sp.SetEndTimestamp(20)
	sp.SetKind(ptrace.SpanKindServer)
	fillAttrs(sp.Attributes())
	sp.Events().AppendEmpty().SetName("event")
	sp.Status().SetCode(ptrace.StatusCodeError)

	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	fillAttrs(rm.Resource().Attributes())
	sm := rm.ScopeMetrics().AppendEmpty()
	g := sm.Metrics().AppendEmpty()
	g.SetName("gauge")
	dp := g.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetDoubleValue(2.5)
	fillAttrs(dp.Attributes())
	h := sm.Metrics().AppendEmpty()
	h.SetName("histogram")
	hp := h.SetEmptyHistogram().DataPoints().AppendEmpty()
	hp.SetCount(3)
	hp.BucketCounts().FromRaw([]uint64{1, 2})
	hp.ExplicitBounds().FromRaw([]float64{0.5})
	s := sm.Metrics().AppendEmpty()
	s.SetName("sum")
	s.SetEmptySum().DataPoints().AppendEmpty().SetIntValue(4)

	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	fillAttrs(rl.Resource().Attributes())
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr("body")
	lr.SetSeverityNumber(plog.SeverityNumberWarn)
	fillAttrs(lr.Attributes())

	for _, o := range []Options{{}, {Unpacked: true}} {
		want, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		back, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(Traces(td, o))
		got, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(back)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%+v: traces read back differ (%v)", o, err)
		}
		want, _ = (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
		backM, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(Metrics(md, o))
		got, _ = (&pmetric.ProtoMarshaler{}).MarshalMetrics(backM)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%+v: metrics read back differ (%v)", o, err)
		}
		want, _ = (&plog.ProtoMarshaler{}).MarshalLogs(ld)
		backL, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(Logs(ld, o))
		got, _ = (&plog.ProtoMarshaler{}).MarshalLogs(backL)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%+v: logs read back differ (%v)", o, err)
		}
	}
	// The encoder's own order is not pdata's: that is what it is for.
	pdataOrder, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if bytes.Equal(Traces(td, Options{}), pdataOrder) {
		t.Error("the SDK-ordered encoding equals pdata's")
	}
}
