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
