// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"testing"
)

func TestZeroAllocations(t *testing.T) {
	for _, sig := range signals {
		bt := testRequest(t, "alloc/"+sig.String())
		req := NewRequest(sig, bt.b)
		var first ResourceData
		for rd := range req.Resources() {
			first = rd
			break
		}
		res, err := first.Resource()
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 0, len(bt.b)+16)
		keys := []string{"service.name", "key.3"}
		// The checks below drop results; make sure the paths they pin do
		// the full work rather than fail early without allocating.
		if n, err := req.ItemCount(); err != nil || n == 0 {
			t.Fatalf("%v: ItemCount = %d, %v", sig, n, err)
		}
		if _, err := res.Hash(); err != nil {
			t.Fatalf("%v: Hash: %v", sig, err)
		}
		if _, found, err := res.HashKeys(keys); err != nil || found == 0 {
			t.Fatalf("%v: HashKeys found %d, %v", sig, found, err)
		}
		checks := map[string]func(){
			"Request.ItemCount":            func() { _, _ = req.ItemCount() },
			"Request.ItemAndResourceCount": func() { _, _, _ = req.ItemAndResourceCount() },
			"ResourceData.ItemCount":       func() { _, _ = first.ItemCount() },
			"iterate": func() {
				for rd, err := range req.Resources() {
					if err != nil {
						t.Fatal(err)
					}
					for sd := range rd.Scopes() {
						_, _ = sd.ItemCount()
					}
					r, _ := rd.Resource()
					for kv := range r.Attributes() {
						_ = kv.KeyBytes()
						v, _ := kv.Value()
						for range v.Slice() {
						}
						for range v.Map() {
						}
					}
				}
			},
			"Attribute": func() {
				if _, ok, _ := res.Attribute("service.name"); !ok {
					t.Fatal("service.name not found")
				}
			},
			"Hash":             func() { _, _ = res.Hash() },
			"HashKeys":         func() { _, _, _ = res.HashKeys(keys) },
			"HashWith(V2)":     func() { _, _ = res.HashWith(HashV2) },
			"HashKeysWith(V2)": func() { _, _, _ = res.HashKeysWith(HashV2, keys) },
			"AppendRequest": func() {
				out := buf[:0]
				for rd := range req.Resources() {
					out = AppendRequest(out, rd)
				}
			},
			"AppendText": func() {
				v, _, _ := res.Attribute("service.name")
				_ = v.AppendText(buf[:0])
			},
			"Text": func() {
				v, _, _ := res.Attribute("service.name")
				if _, err := v.Text(buf[:0]); err != nil {
					t.Fatal(err)
				}
			},
			"Text of a kvlist": func() {
				v, err := NewValue(kvlistValue)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := v.Text(buf[:0]); err != nil {
					t.Fatal(err)
				}
			},
		}
		for name, fn := range checks {
			if n := testing.AllocsPerRun(20, fn); n != 0 {
				t.Errorf("%v %s: %v allocations", sig, name, n)
			}
		}
	}
}

// TestItemViewsZeroAllocations pins that walking items and reading their
// scalar fields allocates nothing.
func TestItemViewsZeroAllocations(t *testing.T) {
	for _, sig := range signals {
		bt := testRequest(t, "items/"+sig.String())
		req := NewRequest(sig, bt.b)
		var errs firstError
		walked := 0
		walk := func() { walked += walkItems(req, &errs) }
		if n := testing.AllocsPerRun(20, walk); n != 0 {
			t.Errorf("%v: walking items allocates %v times", sig, n)
		}
		if errs.err != nil {
			t.Fatal(errs.err)
		}
		if walked == 0 {
			t.Fatalf("%v: no items walked", sig)
		}
	}
}

// firstError keeps the first error it is given.
type firstError struct{ err error }

func (f *firstError) add(err error) {
	if f.err == nil && err != nil {
		f.err = err
	}
}

func second[A any](_ A, err error) error        { return err }
func third[A, B any](_ A, _ B, err error) error { return err }

// walkItems reads every field of every item view of req, keeps the first
// error in errs and returns how many items it walked. The fuzz targets use it
// on arbitrary input, the allocation test on generated batches.
func walkItems(req Request, errs *firstError) int {
	n := 0
	for rd, err := range req.Resources() {
		errs.add(err)
		for sd, err := range rd.Scopes() {
			errs.add(err)
			switch req.Signal() {
			case SignalTraces:
				for sp, err := range sd.Spans() {
					errs.add(err)
					readSpan(sp, errs)
					n++
				}
			case SignalLogs:
				for lr, err := range sd.LogRecords() {
					errs.add(err)
					readLogRecord(lr, errs)
					n++
				}
			case SignalMetrics:
				for m, err := range sd.Metrics() {
					errs.add(err)
					readMetric(m, errs)
					n++
				}
			}
		}
	}
	return n
}

// readKV reads one attribute. Iterators are ranged over where they are made
// (never passed around) so that the compiler can inline them: an iterator
// passed as a value makes its loop body escape and allocate.
func readKV(kv KeyValue, err error, errs *firstError) {
	errs.add(err)
	errs.add(second(kv.Value()))
}

func readSpan(sp Span, errs *firstError) {
	errs.add(second(sp.TraceID()))
	errs.add(second(sp.SpanID()))
	errs.add(second(sp.ParentSpanID()))
	errs.add(second(sp.TraceState()))
	errs.add(second(sp.Name()))
	errs.add(second(sp.Kind()))
	errs.add(second(sp.StartTimeUnixNano()))
	errs.add(second(sp.EndTimeUnixNano()))
	errs.add(second(sp.Flags()))
	errs.add(second(sp.Status()))
	errs.add(second(sp.DroppedAttributesCount()))
	errs.add(second(sp.DroppedEventsCount()))
	errs.add(second(sp.DroppedLinksCount()))
	errs.add(third(sp.Attribute("key.1")))
	for kv, err := range sp.Attributes() {
		readKV(kv, err, errs)
	}
	for ev, err := range sp.Events() {
		errs.add(err)
		errs.add(second(ev.Name()))
		errs.add(second(ev.TimeUnixNano()))
		errs.add(second(ev.DroppedAttributesCount()))
		for kv, err := range ev.Attributes() {
			readKV(kv, err, errs)
		}
	}
	for l, err := range sp.Links() {
		errs.add(err)
		errs.add(second(l.TraceID()))
		errs.add(second(l.SpanID()))
		errs.add(second(l.TraceState()))
		errs.add(second(l.Flags()))
		errs.add(second(l.DroppedAttributesCount()))
		for kv, err := range l.Attributes() {
			readKV(kv, err, errs)
		}
	}
}

func readLogRecord(lr LogRecord, errs *firstError) {
	errs.add(second(lr.TimeUnixNano()))
	errs.add(second(lr.ObservedTimeUnixNano()))
	errs.add(second(lr.SeverityNumber()))
	errs.add(second(lr.SeverityText()))
	errs.add(second(lr.Body()))
	errs.add(second(lr.Flags()))
	errs.add(second(lr.TraceID()))
	errs.add(second(lr.SpanID()))
	errs.add(second(lr.EventName()))
	errs.add(second(lr.DroppedAttributesCount()))
	errs.add(third(lr.Attribute("key.1")))
	for kv, err := range lr.Attributes() {
		readKV(kv, err, errs)
	}
}

func readExemplar(e Exemplar, err error, errs *firstError) {
	errs.add(err)
	errs.add(second(e.TimeUnixNano()))
	errs.add(second(e.ValueType()))
	errs.add(second(e.DoubleValue()))
	errs.add(second(e.IntValue()))
	errs.add(second(e.TraceID()))
	errs.add(second(e.SpanID()))
	for kv, err := range e.FilteredAttributes() {
		readKV(kv, err, errs)
	}
}

func readMetric(m Metric, errs *firstError) {
	errs.add(second(m.Name()))
	errs.add(second(m.Description()))
	errs.add(second(m.Unit()))
	errs.add(second(m.Type()))
	errs.add(second(m.AggregationTemporality()))
	errs.add(second(m.IsMonotonic()))
	errs.add(second(m.DataPointCount()))
	for kv, err := range m.Metadata() {
		readKV(kv, err, errs)
	}
	for p, err := range m.NumberDataPoints() {
		errs.add(err)
		errs.add(second(p.StartTimeUnixNano()))
		errs.add(second(p.TimeUnixNano()))
		errs.add(second(p.ValueType()))
		errs.add(second(p.DoubleValue()))
		errs.add(second(p.IntValue()))
		errs.add(second(p.Flags()))
		for kv, err := range p.Attributes() {
			readKV(kv, err, errs)
		}
		for e, err := range p.Exemplars() {
			readExemplar(e, err, errs)
		}
	}
	for p, err := range m.HistogramDataPoints() {
		errs.add(err)
		errs.add(second(p.StartTimeUnixNano()))
		errs.add(second(p.TimeUnixNano()))
		errs.add(second(p.Count()))
		errs.add(third(p.Sum()))
		errs.add(third(p.Min()))
		errs.add(third(p.Max()))
		errs.add(second(p.Flags()))
		for _, err := range p.BucketCounts() {
			errs.add(err)
		}
		for _, err := range p.ExplicitBounds() {
			errs.add(err)
		}
		for kv, err := range p.Attributes() {
			readKV(kv, err, errs)
		}
		for e, err := range p.Exemplars() {
			readExemplar(e, err, errs)
		}
	}
	for p, err := range m.ExponentialHistogramDataPoints() {
		errs.add(err)
		errs.add(second(p.StartTimeUnixNano()))
		errs.add(second(p.TimeUnixNano()))
		errs.add(second(p.Count()))
		errs.add(third(p.Sum()))
		errs.add(third(p.Min()))
		errs.add(third(p.Max()))
		errs.add(second(p.Scale()))
		errs.add(second(p.ZeroCount()))
		errs.add(second(p.ZeroThreshold()))
		errs.add(second(p.Flags()))
		errs.add(second(p.Positive().Offset()))
		for _, err := range p.Positive().BucketCounts() {
			errs.add(err)
		}
		errs.add(second(p.Negative().Offset()))
		for _, err := range p.Negative().BucketCounts() {
			errs.add(err)
		}
		for kv, err := range p.Attributes() {
			readKV(kv, err, errs)
		}
		for e, err := range p.Exemplars() {
			readExemplar(e, err, errs)
		}
	}
	for p, err := range m.SummaryDataPoints() {
		errs.add(err)
		errs.add(second(p.StartTimeUnixNano()))
		errs.add(second(p.TimeUnixNano()))
		errs.add(second(p.Count()))
		errs.add(second(p.Sum()))
		errs.add(second(p.Flags()))
		for _, err := range p.QuantileValues() {
			errs.add(err)
		}
		for kv, err := range p.Attributes() {
			readKV(kv, err, errs)
		}
	}
}

// SplitResource allocates a constant per call (its iterator state), never per
// chunk: cutting into eight times more chunks allocates the same.
func TestCutAllocatesNothingPerChunk(t *testing.T) {
	bt := testRequest(t, "cut/traces")
	req := NewRequest(SignalTraces, bt.b)
	buf := make([]byte, 0, len(bt.b)+16)
	cut := func(limit int) (allocs float64, chunks int) {
		allocs = testing.AllocsPerRun(20, func() {
			chunks = 0
			for rd := range req.Resources() {
				for _, err := range SplitResource(rd, limit, buf[:0]) {
					if err != nil {
						t.Fatal(err)
					}
					chunks++
				}
			}
		})
		return allocs, chunks
	}
	a1, c1 := cut(4096)
	a8, c8 := cut(1024)
	if c8 < 3*c1 {
		t.Fatalf("%d and %d chunks: the limits do not change the chunk count enough", c1, c8)
	}
	if a8 != a1 || a1 > 4*3 { // at most 4 per call (3 resources)
		t.Fatalf("%v allocations for %d chunks, %v for %d", a1, c1, a8, c8)
	}
}
