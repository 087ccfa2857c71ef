// SPDX-License-Identifier: Apache-2.0

package wirediff

import (
	"errors"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	. "github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

func FuzzTraces(f *testing.F)  { fuzzSignal(f, SignalTraces) }
func FuzzMetrics(f *testing.F) { fuzzSignal(f, SignalMetrics) }
func FuzzLogs(f *testing.F)    { fuzzSignal(f, SignalLogs) }

// fuzzSignal checks the documented semantics on arbitrary bytes:
//   - nothing panics and every error matches ErrMalformed;
//   - input pdata's OTLP receiver path accepts is refused only with an error
//     matching ErrUnsupported (groups, values nested over 100 deep);
//   - when both accept, counts equal pdata's; every resource attribute
//     (key, kind and Text) equals pdata's, in wire order; every chunk
//     SplitResource builds is accepted by pdata with the announced count;
//     and every field of every item view equals pdata's;
//   - attribute iteration, lookup and Hash validate the same bytes: each
//     fails exactly when the others do (otlpwire's FuzzResourceHashes also
//     checks each hash against one recomputed from the attributes).
//
// The seed corpus lives in testdata/fuzz/Fuzz<Signal>.
func fuzzSignal(f *testing.F, sig Signal) {
	f.Fuzz(func(t *testing.T, b []byte) {
		req := NewRequest(sig, b)
		n, err := req.ItemCount()
		want, perr := receiverCount(sig, b)
		pres := receiverResources(sig, b)
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("error does not match ErrMalformed: %v", err)
		}
		if perr == nil {
			if err != nil && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("pdata accepts (%d items), otlpwire: %v", want, err)
			}
			if err == nil && n != want {
				t.Fatalf("ItemCount %d, pdata %d", n, want)
			}
		}
		i := 0
		for rd, err := range req.Resources() {
			if err != nil {
				break
			}
			fuzzResource(t, rd, perr == nil, pres, i)
			i++
			for sd, err := range rd.Scopes() {
				if err != nil {
					break
				}
				_, _ = sd.ItemCount()
			}
			if rn, rerr := rd.ItemCount(); perr == nil && rerr == nil {
				fuzzSplit(t, sig, rd, rn)
			}
		}
		var errs firstError
		walked := walkItems(req, &errs)
		if errs.err != nil && !errors.Is(errs.err, ErrMalformed) {
			t.Fatalf("item view error does not match ErrMalformed: %v", errs.err)
		}
		if perr == nil && errs.err != nil && !errors.Is(errs.err, ErrUnsupported) {
			t.Fatalf("pdata accepts, item views: %v", errs.err)
		}
		if perr == nil && errs.err == nil {
			var st itemStats
			compareItems(t, sig, b, &st)
			if sig != SignalMetrics && walked != want {
				t.Fatalf("walked %d items, pdata %d", walked, want)
			}
		}
	})
}

// fuzzResource checks the resource of rd, the i-th of a request; accepted
// tells whether pdata accepted the request, whose resource attributes are
// pres.
func fuzzResource(t *testing.T, rd ResourceData, accepted bool, pres []pcommon.Map, i int) {
	t.Helper()
	res, err := rd.Resource()
	if err != nil {
		if accepted && !errors.Is(err, ErrUnsupported) {
			t.Fatalf("pdata accepts, Resource: %v", err)
		}
		return
	}
	var iterErr error
	var keys []string
	for kv, err := range res.Attributes() {
		if err != nil {
			iterErr = err
			break
		}
		keys = append(keys, kv.Key())
		v, err := kv.Value()
		if err != nil {
			t.Fatalf("Value of a yielded attribute: %v", err)
		}
		text, terr := v.Text(nil)
		if terr != nil && !errors.Is(terr, ErrNoText) {
			t.Fatalf("Text of a yielded attribute: %v", terr)
		}
		if got := string(v.AppendText(nil)); got != string(text) {
			t.Fatalf("AppendText %q, Text %q", got, text)
		}
	}
	_, herr := res.Hash()
	_, _, gerr := res.Attribute("service.name")
	_, _, kerr := res.HashKeys([]string{"service.name", "k"})
	if (iterErr == nil) != (herr == nil) || (herr == nil) != (gerr == nil) || (gerr == nil) != (kerr == nil) {
		t.Fatalf("validation differs: Attributes %v, Hash %v, Attribute %v, HashKeys %v", iterErr, herr, gerr, kerr)
	}
	if iterErr != nil {
		if !errors.Is(iterErr, ErrMalformed) {
			t.Fatalf("attribute error does not match ErrMalformed: %v", iterErr)
		}
		if accepted && !errors.Is(iterErr, ErrUnsupported) {
			t.Fatalf("pdata accepts, attributes: %v", iterErr)
		}
		return
	}
	if accepted {
		if i >= len(pres) {
			t.Fatalf("resource %d, pdata has %d", i, len(pres))
		}
		checkAttrs(t, res.Attributes(), res.Attribute, pres[i])
		if len(keys) != pres[i].Len() {
			t.Fatalf("%d attributes, pdata %d", len(keys), pres[i].Len())
		}
	}
}

// fuzzSplit checks that the chunks of an accepted resource of rn items are
// accepted by pdata with the announced counts and hold every item
// (otlpwire's own fuzz targets compare them with the previous implementation).
func fuzzSplit(t *testing.T, sig Signal, rd ResourceData, rn int) {
	t.Helper()
	total := 0
	for c, err := range SplitResource(rd, 200, nil) {
		if errors.Is(err, ErrItemTooLarge) {
			return
		}
		if err != nil {
			t.Fatalf("split of an accepted resource: %v", err)
		}
		if len(c.Request) > 200 {
			t.Fatalf("chunk of %d bytes", len(c.Request))
		}
		got, err := receiverCount(sig, c.Request)
		if err != nil || got != c.ItemCount {
			t.Fatalf("chunk: pdata %d items (%v), ItemCount %d", got, err, c.ItemCount)
		}
		total += c.ItemCount
	}
	if total != rn {
		t.Fatalf("chunks hold %d items, resource %d", total, rn)
	}
}

// receiverResources returns the resource attributes of every resource of b
// as pdata's OTLP receiver reads them, or nil if it rejects b.
func receiverResources(sig Signal, b []byte) []pcommon.Map {
	var out []pcommon.Map
	switch sig {
	case SignalTraces:
		req := ptraceotlp.NewExportRequest()
		if req.UnmarshalProto(b) != nil {
			return nil
		}
		for _, rs := range req.Traces().ResourceSpans().All() {
			out = append(out, rs.Resource().Attributes())
		}
	case SignalMetrics:
		req := pmetricotlp.NewExportRequest()
		if req.UnmarshalProto(b) != nil {
			return nil
		}
		for _, rm := range req.Metrics().ResourceMetrics().All() {
			out = append(out, rm.Resource().Attributes())
		}
	default:
		req := plogotlp.NewExportRequest()
		if req.UnmarshalProto(b) != nil {
			return nil
		}
		for _, rl := range req.Logs().ResourceLogs().All() {
			out = append(out, rl.Resource().Attributes())
		}
	}
	return out
}

// receiverCount unmarshals b as pdata's OTLP receivers do and counts items.
func receiverCount(sig Signal, b []byte) (int, error) {
	switch sig {
	case SignalTraces:
		req := ptraceotlp.NewExportRequest()
		err := req.UnmarshalProto(b)
		return req.Traces().SpanCount(), err
	case SignalMetrics:
		req := pmetricotlp.NewExportRequest()
		err := req.UnmarshalProto(b)
		return req.Metrics().DataPointCount(), err
	default:
		req := plogotlp.NewExportRequest()
		err := req.UnmarshalProto(b)
		return req.Logs().LogRecordCount(), err
	}
}
