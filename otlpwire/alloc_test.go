package otlpwire

import (
	"testing"
)

func TestZeroAllocations(t *testing.T) {
	for _, sig := range signals {
		bt := genBatch(sig, 5, shape{resources: 3, scopes: 2, items: 5, attrs: 8})
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
		checks := map[string]func(){
			"Request.ItemCount":      func() { _, _ = req.ItemCount() },
			"ResourceData.ItemCount": func() { _, _ = first.ItemCount() },
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
			"Hash":     func() { _, _ = res.Hash() },
			"HashKeys": func() { _, _, _ = res.HashKeys(keys) },
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
		bt := genBatch(sig, 7, shape{resources: 2, scopes: 2, items: 6, attrs: 4})
		req := NewRequest(sig, bt.b)
		walked := 0
		walk := func() {
			for rd, err := range req.Resources() {
				if err != nil {
					t.Fatal(err)
				}
				for sd := range rd.Scopes() {
					switch sig {
					case SignalTraces:
						for sp := range sd.Spans() {
							walked++
							readSpan(sp)
						}
					case SignalLogs:
						for lr := range sd.LogRecords() {
							walked++
							readLogRecord(lr)
						}
					case SignalMetrics:
						for m := range sd.Metrics() {
							walked++
							readMetric(m)
						}
					}
				}
			}
		}
		if n := testing.AllocsPerRun(20, walk); n != 0 {
			t.Errorf("%v: walking items allocates %v times", sig, n)
		}
		if walked == 0 {
			t.Fatalf("%v: no items walked", sig)
		}
	}
}

func readSpan(sp Span) {
	_, _ = sp.TraceID()
	_, _ = sp.SpanID()
	_, _ = sp.ParentSpanID()
	_, _ = sp.TraceState()
	_, _ = sp.Name()
	_, _ = sp.Kind()
	_, _ = sp.StartTimeUnixNano()
	_, _ = sp.EndTimeUnixNano()
	_, _ = sp.Flags()
	_, _ = sp.Status()
	_, _ = sp.DroppedAttributesCount()
	_, _, _ = sp.Attribute("key.1")
	for kv := range sp.Attributes() {
		_, _ = kv.Value()
	}
	for ev := range sp.Events() {
		_, _ = ev.Name()
		_, _ = ev.TimeUnixNano()
		for range ev.Attributes() {
		}
	}
	for l := range sp.Links() {
		_, _ = l.TraceID()
		_, _ = l.SpanID()
		_, _ = l.Flags()
		for range l.Attributes() {
		}
	}
}

func readLogRecord(lr LogRecord) {
	_, _ = lr.TimeUnixNano()
	_, _ = lr.ObservedTimeUnixNano()
	_, _ = lr.SeverityNumber()
	_, _ = lr.SeverityText()
	_, _ = lr.Body()
	_, _ = lr.Flags()
	_, _ = lr.TraceID()
	_, _ = lr.SpanID()
	_, _ = lr.EventName()
	_, _ = lr.DroppedAttributesCount()
	for kv := range lr.Attributes() {
		_, _ = kv.Value()
	}
}

func readMetric(m Metric) {
	_, _ = m.Name()
	_, _ = m.Description()
	_, _ = m.Unit()
	_, _ = m.Type()
	_, _ = m.AggregationTemporality()
	_, _ = m.IsMonotonic()
	_, _ = m.DataPointCount()
	for p := range m.NumberDataPoints() {
		_, _ = p.StartTimeUnixNano()
		_, _ = p.TimeUnixNano()
		_, _ = p.ValueType()
		_, _ = p.DoubleValue()
		_, _ = p.IntValue()
		_, _ = p.Flags()
		for range p.Attributes() {
		}
		for e := range p.Exemplars() {
			_, _ = e.DoubleValue()
			_, _ = e.TraceID()
		}
	}
	for p := range m.HistogramDataPoints() {
		_, _ = p.Count()
		_, _, _ = p.Sum()
		_, _, _ = p.Min()
		_, _, _ = p.Max()
		for range p.BucketCounts() {
		}
		for range p.ExplicitBounds() {
		}
		for range p.Exemplars() {
		}
	}
	for p := range m.ExponentialHistogramDataPoints() {
		_, _ = p.Count()
		_, _ = p.Scale()
		_, _ = p.ZeroCount()
		_, _ = p.ZeroThreshold()
		_, _ = p.Positive().Offset()
		for range p.Positive().BucketCounts() {
		}
		for range p.Negative().BucketCounts() {
		}
		for range p.Attributes() {
		}
	}
	for p := range m.SummaryDataPoints() {
		_, _ = p.Count()
		_, _ = p.Sum()
		for range p.QuantileValues() {
		}
		for range p.Attributes() {
		}
	}
}
