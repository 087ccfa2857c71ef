package otlpwire

import (
	"errors"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

func FuzzTraces(f *testing.F)  { fuzzSignal(f, SignalTraces) }
func FuzzMetrics(f *testing.F) { fuzzSignal(f, SignalMetrics) }
func FuzzLogs(f *testing.F)    { fuzzSignal(f, SignalLogs) }

// fuzzSignal checks that nothing panics and that, for every input pdata's
// OTLP receiver path accepts, counts agree with pdata, every chunk that
// SplitResource builds is accepted by pdata with the announced count, and
// every field of every item view (spans, events, links, log records,
// metrics, data points, exemplars) reads without error and equals pdata's.
// Errors from item views must match ErrMalformed. The seed corpus lives in
// testdata/fuzz/Fuzz<Signal>.
func fuzzSignal(f *testing.F, sig Signal) {
	f.Fuzz(func(t *testing.T, b []byte) {
		req := NewRequest(sig, b)
		n, err := req.ItemCount()
		want, perr := receiverCount(sig, b)
		if perr == nil {
			// The one documented divergence: groups are always rejected.
			if err != nil && !errors.Is(err, errGroup) {
				t.Fatalf("pdata accepts (%d items), otlpwire: %v", want, err)
			}
			if err == nil && n != want {
				t.Fatalf("ItemCount %d, pdata %d", n, want)
			}
		}
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("error does not match ErrMalformed: %v", err)
		}
		for rd, err := range req.Resources() {
			if err != nil {
				break
			}
			rn, rerr := rd.ItemCount()
			if res, err := rd.Resource(); err == nil {
				for kv, err := range res.Attributes() {
					if err != nil {
						break
					}
					if v, err := kv.Value(); err == nil {
						_ = v.AppendText(nil)
					}
				}
				_, herr := res.Hash()
				if perr == nil && err == nil && herr != nil && !errors.Is(herr, errGroup) && !errors.Is(herr, errTooDeep) {
					t.Fatalf("pdata accepts, Hash: %v", herr)
				}
				_, _, _ = res.HashKeys([]string{"service.name"})
			}
			for sd, err := range rd.Scopes() {
				if err != nil {
					break
				}
				_, _ = sd.ItemCount()
			}
			if perr != nil || rerr != nil {
				continue
			}
			total, tooLarge := 0, false
			for c, err := range SplitResource(rd, 200, nil) {
				if errors.Is(err, ErrItemTooLarge) {
					tooLarge = true
					break
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
			if !tooLarge && total != rn {
				t.Fatalf("chunks hold %d items, resource %d", total, rn)
			}
		}
		var errs firstError
		walked := walkItems(req, &errs)
		if errs.err != nil && !errors.Is(errs.err, ErrMalformed) {
			t.Fatalf("item view error does not match ErrMalformed: %v", errs.err)
		}
		if perr == nil && errs.err != nil && !errors.Is(errs.err, errGroup) {
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
