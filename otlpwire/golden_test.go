// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// testdata/golden.json holds requests of every signal with what pdata makes
// of them: item counts, resources with their attributes, lookups, scopes and
// the identity of each item, and for malformed requests the error each must
// give. The root module's internal/wiregolden writes it (make
// generate-golden, part of make generate); this module has no dependency to
// ask pdata itself, so the file is its oracle.
type goldenFile struct {
	Vectors []goldenVector `json:"vectors"`
}

type goldenVector struct {
	Name         string       `json:"name"`
	Signal       string       `json:"signal"`
	Request      []byte       `json:"request"`
	Error        string       `json:"error"`
	ErrorAt      string       `json:"errorAt"`
	PdataAccepts bool         `json:"pdataAccepts"`
	Items        int          `json:"items"`
	Resources    []gvResource `json:"resources"`
}

type gvResource struct {
	Items       int        `json:"items"`
	Profiles    int        `json:"profiles"`
	Dropped     uint32     `json:"droppedAttributesCount"`
	SchemaURL   string     `json:"schemaUrl"`
	Attributes  []gvAttr   `json:"attributes"`
	Lookups     []gvLookup `json:"lookups"`
	Scopes      []gvScope  `json:"scopes"`
	ItemKeys    []string   `json:"itemKeys"`
	ItemDetails []string   `json:"itemDetails"`
	MinChunk    int        `json:"minChunk"`
}

type gvScope struct {
	Name       string   `json:"name"`
	Version    string   `json:"version"`
	Items      int      `json:"items"`
	Attributes []gvAttr `json:"attributes"`
}

type gvAttr struct {
	Key   string  `json:"key"`
	Value gvValue `json:"value"`
}

type gvLookup struct {
	Key   string  `json:"key"`
	Found bool    `json:"found"`
	Value gvValue `json:"value"`
}

type gvValue struct {
	Kind       string    `json:"kind"`
	Text       string    `json:"text"`
	Str        string    `json:"str"`
	Int        int64     `json:"int"`
	DoubleBits uint64    `json:"doubleBits"`
	Bool       bool      `json:"bool"`
	Bytes      []byte    `json:"bytes"`
	Len        int       `json:"len"`
	Elems      []gvValue `json:"elems"`
	Entries    []gvAttr  `json:"entries"`
}

var loadGolden = sync.OnceValues(func() ([]goldenVector, error) {
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		return nil, err
	}
	var g goldenFile
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, err
	}
	return g.Vectors, nil
})

func goldenVectors(t *testing.T) []goldenVector {
	t.Helper()
	vs, err := loadGolden()
	if err != nil {
		t.Fatalf("testdata/golden.json: %v", err)
	}
	if len(vs) == 0 {
		t.Fatal("testdata/golden.json holds no vector")
	}
	return vs
}

func (v goldenVector) signal(t *testing.T) Signal {
	t.Helper()
	for _, s := range append(signals, SignalProfiles) {
		if s.String() == v.Signal {
			return s
		}
	}
	t.Fatalf("unknown signal %q", v.Signal)
	return 0
}

// goldenReasons maps the reasons named in golden.json to the errors they
// stand for.
var goldenReasons = map[string]error{
	"truncated":  errTruncated,
	"overflow":   errOverflow,
	"field_zero": errFieldZero,
	"wire_type":  errWireType,
	"bad_wire":   errBadWire,
	"group":      errGroup,
	"bad_length": errBadLength,
	// Profiles laid out by another version of their proto (pdata may
	// accept them, skipping the fields it does not know), and string
	// references pdata cannot resolve.
	"profiles_version": ErrProfilesVersion,
	"strindex":         errStrindex,
}

// The golden file must cover what it claims: every signal, every metric
// type, both encodings, the deprecated field and malformed inputs.
func TestGoldenCoverage(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range goldenVectors(t) {
		seen[v.Signal] = true
		seen[v.Name] = true
		if v.Error != "" {
			seen["error:"+v.Error] = true
		}
		for _, r := range v.Resources {
			for _, a := range r.Attributes {
				seen["kind:"+a.Value.Kind] = true
			}
			for _, k := range r.ItemKeys {
				for _, typ := range []string{"Gauge", "Sum", "Histogram", "ExponentialHistogram", "Summary"} {
					if bytes.Contains([]byte(k), []byte("/"+typ+"/")) {
						seen["type:"+typ] = true
					}
				}
			}
		}
	}
	for _, want := range []string{"traces", "metrics", "logs", "profiles", "profiles-shared/pdata",
		"profiles-shared/dictionary-split", "profiles-empty/hand",
		"traces/pdata", "traces/sdk", "metrics/pdata", "metrics/sdk", "logs/pdata", "logs/sdk",
		"logs/deprecated1000", "edge/deprecated-1000-only", "edge/deprecated-1000-after-2",
		"type:Gauge", "type:Sum", "type:Histogram", "type:ExponentialHistogram", "type:Summary",
		"kind:Str", "kind:Int", "kind:Double", "kind:Bool", "kind:Map", "kind:Slice", "kind:Bytes", "kind:Empty",
	} {
		if !seen[want] {
			t.Errorf("golden.json lacks %s", want)
		}
	}
	for name := range goldenReasons {
		if !seen["error:"+name] {
			t.Errorf("golden.json has no malformed vector giving %s", name)
		}
	}
}

// TestGoldenCounts: every count otlpwire gives is pdata's.
func TestGoldenCounts(t *testing.T) {
	for _, v := range goldenVectors(t) {
		if v.Error != "" {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			req := NewRequest(v.signal(t), v.Request)
			n, err := req.ItemCount()
			if err != nil || n != v.Items {
				t.Fatalf("ItemCount = %d, %v; pdata counts %d", n, err, v.Items)
			}
			items, resources, err := req.ItemAndResourceCount()
			if err != nil || items != v.Items || resources != len(v.Resources) {
				t.Fatalf("ItemAndResourceCount = %d, %d, %v; pdata: %d items, %d resources", items, resources, err, v.Items, len(v.Resources))
			}
			i, profiles := 0, 0
			for rd, err := range req.Resources() {
				if err != nil {
					t.Fatal(err)
				}
				if i >= len(v.Resources) {
					t.Fatalf("more than the %d resources pdata reads", len(v.Resources))
				}
				want := v.Resources[i]
				if n, err := rd.ItemCount(); err != nil || n != want.Items {
					t.Fatalf("resource %d: ItemCount = %d, %v; pdata counts %d", i, n, err, want.Items)
				}
				if n, err := WholeItemCount(rd); err != nil || n != want.Items {
					t.Fatalf("resource %d: WholeItemCount = %d, %v; pdata counts %d", i, n, err, want.Items)
				}
				if rd.Signal() == SignalProfiles {
					if n, err := rd.ProfileCount(); err != nil || n != want.Profiles {
						t.Fatalf("resource %d: ProfileCount = %d, %v; pdata counts %d", i, n, err, want.Profiles)
					}
					profiles += want.Profiles
				}
				j := 0
				for sd, err := range rd.Scopes() {
					if err != nil {
						t.Fatal(err)
					}
					if j >= len(want.Scopes) {
						t.Fatalf("resource %d: more than the %d scopes pdata reads", i, len(want.Scopes))
					}
					if n, err := sd.ItemCount(); err != nil || n != want.Scopes[j].Items {
						t.Fatalf("resource %d scope %d: ItemCount = %d, %v; pdata counts %d", i, j, n, err, want.Scopes[j].Items)
					}
					j++
				}
				if j != len(want.Scopes) {
					t.Fatalf("resource %d: %d scopes, pdata reads %d", i, j, len(want.Scopes))
				}
				i++
			}
			if i != len(v.Resources) {
				t.Fatalf("Resources yields %d, pdata reads %d", i, len(v.Resources))
			}
			if req.Signal() == SignalProfiles {
				if n, err := req.ProfileCount(); err != nil || n != profiles {
					t.Fatalf("ProfileCount = %d, %v; pdata counts %d", n, err, profiles)
				}
			}
		})
	}
}

// TestGoldenMalformed: each malformed vector gives its error, through
// ErrMalformed and the reason, from every counting entry point.
func TestGoldenMalformed(t *testing.T) {
	for _, v := range goldenVectors(t) {
		if v.Error == "" {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			reason, ok := goldenReasons[v.Error]
			if !ok {
				t.Fatalf("unknown reason %q", v.Error)
			}
			if v.PdataAccepts && reason != ErrProfilesVersion {
				t.Fatal("pdata accepts it: not malformed")
			}
			req := NewRequest(v.signal(t), v.Request)
			switch v.ErrorAt {
			case "strindex":
				checkStrindexResource(t, req)
				return
			case "resource":
				checkMalformedResource(t, req, reason)
				return
			case "items":
				checkMalformedItems(t, req, reason)
				return
			case "layout":
				for rd, err := range req.Resources() {
					if err != nil {
						t.Fatal(err)
					}
					if _, err := rd.Resource(); !errors.Is(err, reason) {
						t.Fatalf("Resource: %v, want %v", err, reason)
					}
					if _, err := rd.SchemaURL(); !errors.Is(err, reason) {
						t.Fatalf("SchemaURL: %v, want %v", err, reason)
					}
					n := 0
					for _, err := range rd.Scopes() {
						n++
						if !errors.Is(err, reason) {
							t.Fatalf("Scopes: %v, want %v", err, reason)
						}
					}
					if n != 1 {
						t.Fatalf("Scopes yields %d times, want one error", n)
					}
				}
			}
			n, err := req.ItemCount()
			if errors.Is(err, ErrMalformed) == v.PdataAccepts || !errors.Is(err, reason) || n != 0 {
				t.Fatalf("ItemCount = %d, %v; want 0 and %v (ErrMalformed: %v)", n, err, reason, !v.PdataAccepts)
			}
			if errors.Is(err, ErrUnsupported) != (reason == errGroup) {
				t.Fatalf("ItemCount error %v: ErrUnsupported is for groups alone", err)
			}
			items, resources, err := req.ItemAndResourceCount()
			if !errors.Is(err, reason) || items != 0 || resources != 0 {
				t.Fatalf("ItemAndResourceCount = %d, %d, %v; want 0, 0, %v", items, resources, err, reason)
			}
			if req.Signal() == SignalProfiles {
				if n, err := req.ProfileCount(); !errors.Is(err, reason) || n != 0 {
					t.Fatalf("ProfileCount = %d, %v; want 0 and %v", n, err, reason)
				}
			}
			// The error is met either by Resources or inside a resource it yields.
			var found error
			for rd, err := range req.Resources() {
				if err != nil {
					found = err
					break
				}
				if _, err := rd.ItemCount(); err != nil {
					found = err
					for _, err := range SplitResource(rd, 1<<20, nil) {
						if !errors.Is(err, reason) {
							t.Fatalf("SplitResource of the malformed resource: %v, want %v", err, reason)
						}
					}
					if _, err := WholeItemCount(rd); !errors.Is(err, reason) {
						t.Fatalf("WholeItemCount: %v, want %v", err, reason)
					}
					break
				}
			}
			if errors.Is(found, ErrMalformed) == v.PdataAccepts || !errors.Is(found, reason) {
				t.Fatalf("walking the resources: %v, want %v", found, reason)
			}
		})
	}
}

// checkMalformedResource: a request whose resource is malformed in a part
// counting does not walk counts, but every reading of the resource fails
// with the reason.
func checkMalformedResource(t *testing.T, req Request, reason error) {
	t.Helper()
	if _, err := req.ItemCount(); err != nil {
		t.Fatalf("ItemCount: %v; counting does not read the resource", err)
	}
	failed := 0
	for rd, err := range req.Resources() {
		if err != nil {
			t.Fatal(err)
		}
		res, err := rd.Resource()
		if err != nil {
			t.Fatal(err)
		}
		is := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, ErrMalformed) || !errors.Is(err, reason) {
				t.Fatalf("%s: %v, want %v", what, err, reason)
			}
		}
		var last error
		for _, err := range res.Attributes() {
			last = err
		}
		is("Attributes", last)
		_, _, err = res.Attribute("k")
		is("Attribute", err)
		_, _, err = res.Attribute("absent")
		is("Attribute of an absent key", err)
		_, err = res.Hash()
		is("Hash", err)
		_, err = res.HashWith(HashV2)
		is("HashWith(HashV2)", err)
		_, _, err = res.HashKeys([]string{"k"})
		is("HashKeys", err)
		_, _, err = res.HashKeysWith(HashV2, []string{"k", "absent"})
		is("HashKeysWith(HashV2)", err)
		_, err = res.DroppedAttributesCount()
		is("DroppedAttributesCount", err)
		failed++
	}
	if failed == 0 {
		t.Fatal("no resource")
	}
}

// checkMalformedItems: a request whose item is malformed inside counts
// (counting does not look inside items), but iterating over the items, or
// the data points of a metric, fails with the reason.
func checkMalformedItems(t *testing.T, req Request, reason error) {
	t.Helper()
	if _, err := req.ItemCount(); err != nil {
		t.Fatalf("ItemCount: %v; counting does not read inside items", err)
	}
	var found error
	for rd, err := range req.Resources() {
		if err != nil {
			t.Fatal(err)
		}
		for sd, err := range rd.Scopes() {
			if err != nil {
				t.Fatal(err)
			}
			note := func(err error) {
				if err != nil && found == nil {
					found = err
				}
			}
			switch req.Signal() {
			case SignalTraces:
				for _, err := range sd.Spans() {
					note(err)
				}
			case SignalLogs:
				for _, err := range sd.LogRecords() {
					note(err)
				}
			case SignalMetrics:
				for m, err := range sd.Metrics() {
					note(err)
					if err != nil {
						continue
					}
					for _, err := range m.NumberDataPoints() {
						note(err)
					}
				}
			}
		}
	}
	if !errors.Is(found, ErrMalformed) || !errors.Is(found, reason) {
		t.Fatalf("iterating over the items: %v, want %v", found, reason)
	}
}

// checkValue compares v with what pdata reads.
func checkValue(t *testing.T, where string, v Value, want gvValue) {
	t.Helper()
	if v.Kind().String() != want.Kind {
		t.Fatalf("%s: kind %v, pdata %s", where, v.Kind(), want.Kind)
	}
	if got := string(v.AppendText(nil)); got != want.Text {
		t.Fatalf("%s: text %q, pdata AsString %q", where, got, want.Text)
	}
	// Text tells an empty rendering from one JSON cannot hold (a NaN or
	// infinity inside a slice or map, which AsString renders as "").
	text, err := v.Text([]byte("prefix:"))
	noText := want.Text == "" && want.Len > 0
	switch {
	case noText && (!errors.Is(err, ErrNoText) || string(text) != "prefix:"):
		t.Fatalf("%s: Text = %q, %v; want ErrNoText and the prefix alone", where, text, err)
	case !noText && (err != nil || string(text) != "prefix:"+want.Text):
		t.Fatalf("%s: Text = %q, %v; pdata AsString %q", where, text, err, want.Text)
	}
	if v.Str() != want.Str {
		t.Fatalf("%s: Str() = %q, want %q", where, v.Str(), want.Str)
	}
	if v.Int() != want.Int {
		t.Fatalf("%s: Int() = %d, want %d", where, v.Int(), want.Int)
	}
	if math.Float64bits(v.Double()) != want.DoubleBits {
		t.Fatalf("%s: Double() = %v, want bits %#x", where, v.Double(), want.DoubleBits)
	}
	if v.Bool() != want.Bool {
		t.Fatalf("%s: Bool() = %v, want %v", where, v.Bool(), want.Bool)
	}
	var wantBytes []byte
	switch want.Kind {
	case "Bytes":
		wantBytes = want.Bytes
	case "Str":
		wantBytes = []byte(want.Str)
	}
	if !bytes.Equal(v.Bytes(), wantBytes) || (v.Bytes() == nil) != (want.Kind != "Bytes" && want.Kind != "Str") {
		t.Fatalf("%s: Bytes() = %q, want %q", where, v.Bytes(), wantBytes)
	}
	n := 0
	for e, err := range v.Slice() {
		if err != nil {
			t.Fatalf("%s: Slice: %v", where, err)
		}
		if n >= len(want.Elems) {
			t.Fatalf("%s: more than the %d elements pdata reads", where, len(want.Elems))
		}
		checkValue(t, fmt.Sprintf("%s[%d]", where, n), e, want.Elems[n])
		n++
	}
	for kv, err := range v.Map() {
		if err != nil {
			t.Fatalf("%s: Map: %v", where, err)
		}
		if n >= len(want.Entries) {
			t.Fatalf("%s: more than the %d entries pdata reads", where, len(want.Entries))
		}
		if kv.Key() != want.Entries[n].Key {
			t.Fatalf("%s: entry %d key %q, pdata %q", where, n, kv.Key(), want.Entries[n].Key)
		}
		e, err := kv.Value()
		if err != nil {
			t.Fatalf("%s: entry %q: %v", where, kv.Key(), err)
		}
		checkValue(t, where+"."+kv.Key(), e, want.Entries[n].Value)
		n++
	}
	if n != want.Len {
		t.Fatalf("%s: %d elements or entries, pdata %d", where, n, want.Len)
	}
}

func checkAttrs(t *testing.T, where string, got func(func(KeyValue, error) bool), want []gvAttr) {
	t.Helper()
	i := 0
	for kv, err := range got {
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if i >= len(want) {
			t.Fatalf("%s: more than the %d attributes pdata reads", where, len(want))
		}
		if kv.Key() != want[i].Key || string(kv.KeyBytes()) != want[i].Key {
			t.Fatalf("%s: attribute %d key %q, pdata %q", where, i, kv.Key(), want[i].Key)
		}
		v, err := kv.Value()
		if err != nil {
			t.Fatalf("%s: %s: %v", where, kv.Key(), err)
		}
		checkValue(t, where+" "+kv.Key(), v, want[i].Value)
		i++
	}
	if i != len(want) {
		t.Fatalf("%s: %d attributes, pdata reads %d", where, i, len(want))
	}
}

// TestGoldenAttributes: resources, their attributes and lookups, and scopes
// read as pdata reads them.
func TestGoldenAttributes(t *testing.T) {
	for _, v := range goldenVectors(t) {
		if v.Error != "" {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			i := 0
			for rd, err := range NewRequest(v.signal(t), v.Request).Resources() {
				if err != nil {
					t.Fatal(err)
				}
				checkResource(t, fmt.Sprintf("resource %d", i), rd, v.Resources[i])
				want := v.Resources[i]
				j := 0
				for sd, err := range rd.Scopes() {
					if err != nil {
						t.Fatal(err)
					}
					ws := want.Scopes[j]
					sc, err := sd.Scope()
					if err != nil {
						t.Fatal(err)
					}
					name, err1 := sc.Name()
					version, err2 := sc.Version()
					if err := errors.Join(err1, err2); err != nil || string(name) != ws.Name || string(version) != ws.Version {
						t.Fatalf("resource %d scope %d: %q %q %v; pdata %q %q", i, j, name, version, err, ws.Name, ws.Version)
					}
					checkAttrs(t, fmt.Sprintf("resource %d scope %d", i, j), sc.Attributes(), ws.Attributes)
					// Attribute finds the first attribute of a key, as pdata's Get.
					seen := map[string]bool{}
					for _, a := range ws.Attributes {
						if seen[a.Key] {
							continue
						}
						seen[a.Key] = true
						got, ok, err := sc.Attribute(a.Key)
						if err != nil || !ok {
							t.Fatalf("scope Attribute(%q) = %v, %v", a.Key, ok, err)
						}
						checkValue(t, "scope Attribute "+a.Key, got, a.Value)
					}
					j++
				}
				i++
			}
		})
	}
}

// checkResource compares a ResourceData's resource with pdata's.
func checkResource(t *testing.T, where string, rd ResourceData, want gvResource) {
	t.Helper()
	res, err := rd.Resource()
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	checkAttrs(t, where, res.Attributes(), want.Attributes)
	if n, err := res.DroppedAttributesCount(); err != nil || n != want.Dropped {
		t.Fatalf("%s: DroppedAttributesCount = %d, %v; pdata %d", where, n, err, want.Dropped)
	}
	if u, err := rd.SchemaURL(); err != nil || string(u) != want.SchemaURL {
		t.Fatalf("%s: SchemaURL = %q, %v; pdata %q", where, u, err, want.SchemaURL)
	}
	for _, l := range want.Lookups {
		got, ok, err := res.Attribute(l.Key)
		if err != nil || ok != l.Found {
			t.Fatalf("%s: Attribute(%q) found = %v, %v; pdata Get finds: %v", where, l.Key, ok, err, l.Found)
		}
		if !ok {
			if got.Kind() != ValueKindEmpty {
				t.Fatalf("%s: Attribute(%q) not found but not empty", where, l.Key)
			}
			continue
		}
		checkValue(t, where+" Attribute "+strconv.Quote(l.Key), got, l.Value)
	}
}

// itemKeys returns the identity of every item of a request's resources, as
// golden.json writes them: scope name, then the span name, the log body's
// text, or the metric name, type and point time.
func itemKeys(t *testing.T, sig Signal, req []byte) [][]string {
	t.Helper()
	var out [][]string
	for rd, err := range NewRequest(sig, req).Resources() {
		if err != nil {
			t.Fatal(err)
		}
		keys := []string{}
		for sd, err := range rd.Scopes() {
			if err != nil {
				t.Fatal(err)
			}
			sc, err := sd.Scope()
			if err != nil {
				t.Fatal(err)
			}
			scope, err := sc.Name()
			if err != nil {
				t.Fatal(err)
			}
			switch sig {
			case SignalTraces:
				for sp, err := range sd.Spans() {
					if err != nil {
						t.Fatal(err)
					}
					name, err := sp.Name()
					if err != nil {
						t.Fatal(err)
					}
					keys = append(keys, string(scope)+"/"+string(name))
				}
			case SignalLogs:
				for lr, err := range sd.LogRecords() {
					if err != nil {
						t.Fatal(err)
					}
					body, err := lr.Body()
					if err != nil {
						t.Fatal(err)
					}
					keys = append(keys, string(scope)+"/"+string(body.AppendText(nil)))
				}
			case SignalMetrics:
				for m, err := range sd.Metrics() {
					if err != nil {
						t.Fatal(err)
					}
					keys = append(keys, metricKeys(t, string(scope), m)...)
				}
			}
		}
		if sig == SignalProfiles {
			keys = append(keys, sampleKeys(t, rd)...)
		}
		out = append(out, keys)
	}
	return out
}

// metricKeys returns the keys of the data points of m, read with the
// iterator of the metric's type; the iterators of the other types must
// yield nothing.
func metricKeys(t *testing.T, scope string, m Metric) []string {
	t.Helper()
	name, err := m.Name()
	if err != nil {
		t.Fatal(err)
	}
	typ, err := m.Type()
	if err != nil {
		t.Fatal(err)
	}
	var times []uint64
	add := func(ts uint64, err error) {
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, ts)
	}
	for p, err := range m.NumberDataPoints() {
		if err != nil {
			t.Fatal(err)
		}
		add(p.TimeUnixNano())
	}
	for p, err := range m.HistogramDataPoints() {
		if err != nil {
			t.Fatal(err)
		}
		add(p.TimeUnixNano())
	}
	for p, err := range m.ExponentialHistogramDataPoints() {
		if err != nil {
			t.Fatal(err)
		}
		add(p.TimeUnixNano())
	}
	for p, err := range m.SummaryDataPoints() {
		if err != nil {
			t.Fatal(err)
		}
		add(p.TimeUnixNano())
	}
	if n, err := m.DataPointCount(); err != nil || n != len(times) {
		t.Fatalf("metric %s: DataPointCount = %d, %v; the iterators yield %d", name, n, err, len(times))
	}
	keys := make([]string, len(times))
	for i, ts := range times {
		keys[i] = fmt.Sprintf("%s/%s/%v/%d", scope, name, typ, ts)
	}
	return keys
}

// TestGoldenItems: the items, read through the scopes and item views, are
// pdata's, in order.
func TestGoldenItems(t *testing.T) {
	for _, v := range goldenVectors(t) {
		if v.Error != "" {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			got := itemKeys(t, v.signal(t), v.Request)
			for i, r := range v.Resources {
				if !slices.Equal(got[i], r.ItemKeys) {
					t.Fatalf("resource %d items:\n%q\npdata:\n%q", i, got[i], r.ItemKeys)
				}
			}
		})
	}
}

// TestGoldenSplit splits every resource at several limits: each chunk fits
// the limit, is a request of that resource alone (its attributes are
// pdata's) whose ItemCount is what it holds, and the chunks' items, in
// order, are the resource's items as pdata reads them. Below MinChunk (an
// item with its envelopes, as pdata writes it) the split must refuse with
// ErrItemTooLarge.
func TestGoldenSplit(t *testing.T) {
	for _, v := range goldenVectors(t) {
		if v.Error != "" {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			sig := v.signal(t)
			i := 0
			for rd, err := range NewRequest(sig, v.Request).Resources() {
				if err != nil {
					t.Fatal(err)
				}
				want := v.Resources[i]
				whole := RequestSize(rd)
				if whole != len(AppendRequest(nil, rd)) {
					t.Fatalf("RequestSize = %d, AppendRequest writes %d bytes", whole, len(AppendRequest(nil, rd)))
				}
				limits := []int{whole, whole + 1}
				if want.MinChunk > 0 {
					if want.MinChunk > whole {
						t.Fatalf("resource %d: pdata's single-item request (%d bytes) is larger than the resource (%d)", i, want.MinChunk, whole)
					}
					limits = append(limits, want.MinChunk, want.MinChunk+1, whole-1)
					// A sweep between, so that scopes and metrics are cut
					// with items pending at every kind of boundary.
					for step := 1; step < 8; step++ {
						limits = append(limits, want.MinChunk+(whole-want.MinChunk)*step/8)
					}
				}
				for _, limit := range limits {
					checkSplit(t, fmt.Sprintf("resource %d limit %d", i, limit), sig, rd, limit, want)
				}
				if want.MinChunk > 0 {
					var last error
					chunks := 0
					for _, err := range SplitResource(rd, want.MinChunk-1, nil) {
						last = err
						chunks++
					}
					if !errors.Is(last, ErrItemTooLarge) {
						t.Fatalf("resource %d: split below the largest single item (%d bytes): %v, want ErrItemTooLarge", i, want.MinChunk, last)
					}
				}
				i++
			}
		})
	}
}

// scopeIsEmpty reports whether sd holds no span, log record or metric (a
// metric without data points counts: it is not nothing).
func scopeIsEmpty(sd ScopeData) bool {
	switch sd.Signal() {
	case SignalTraces:
		for range sd.Spans() {
			return false
		}
	case SignalLogs:
		for range sd.LogRecords() {
			return false
		}
	case SignalMetrics:
		for range sd.Metrics() {
			return false
		}
	case SignalProfiles:
		return must(sd.ProfileCount()) == 0
	}
	return true
}

// hasEmptyScope reports whether want has a scope named as sd's that pdata
// reads without items.
func hasEmptyScope(t *testing.T, sd ScopeData, want gvResource) bool {
	t.Helper()
	name := must(must(sd.Scope()).Name())
	for _, s := range want.Scopes {
		if s.Items == 0 && s.Name == string(name) {
			return true
		}
	}
	return false
}

func checkSplit(t *testing.T, where string, sig Signal, rd ResourceData, limit int, want gvResource) {
	t.Helper()
	var keys []string
	total, chunks := 0, 0
	for c, err := range SplitResource(rd, limit, nil) {
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		chunks++
		if len(c.Request) > limit {
			t.Fatalf("%s: chunk of %d bytes", where, len(c.Request))
		}
		req := NewRequest(sig, c.Request)
		n, resources, err := req.ItemAndResourceCount()
		if err != nil || resources != 1 || n != c.ItemCount {
			t.Fatalf("%s: chunk holds %d items in %d resources (%v), says %d", where, n, resources, err, c.ItemCount)
		}
		total += c.ItemCount
		for crd, err := range req.Resources() {
			if err != nil {
				t.Fatal(err)
			}
			checkResource(t, where+" chunk", crd, want)
		}
		// A chunk holds a scope without items only where the resource has
		// one: splitting never invents an empty scope.
		for crd, err := range req.Resources() {
			if err != nil {
				t.Fatal(err)
			}
			for sd, err := range crd.Scopes() {
				if err != nil {
					t.Fatal(err)
				}
				if scopeIsEmpty(sd) && !hasEmptyScope(t, sd, want) {
					t.Fatalf("%s: a chunk holds an empty scope the resource does not have", where)
				}
			}
		}
		ck := itemKeys(t, sig, c.Request)
		if len(ck[0]) != c.ItemCount {
			t.Fatalf("%s: chunk of %d items says %d", where, len(ck[0]), c.ItemCount)
		}
		keys = append(keys, ck[0]...)
	}
	if chunks == 0 {
		t.Fatalf("%s: no chunk", where)
	}
	if limit >= RequestSize(rd) && chunks != 1 {
		t.Fatalf("%s: a resource that fits is split in %d chunks", where, chunks)
	}
	if total != want.Items {
		t.Fatalf("%s: chunks hold %d items, pdata counts %d", where, total, want.Items)
	}
	if !slices.Equal(keys, want.ItemKeys) && !(len(keys) == 0 && len(want.ItemKeys) == 0) {
		t.Fatalf("%s: chunks hold\n%q\npdata:\n%q", where, keys, want.ItemKeys)
	}
}

// TestGoldenHashes: a resource's hash does not depend on its encoding (the
// same pdata resources written by pdata, in SDK order, reversed, unpacked
// or with scopes in field 1000 hash alike), and HashKeysWith over every key
// of a resource whose keys are distinct is HashWith, whatever absent keys
// are listed too and whether the list is longer than 64 keys.
func TestGoldenHashes(t *testing.T) {
	hashes := map[string][]uint64{} // signal -> HashV1, HashV2 per resource
	for _, v := range goldenVectors(t) {
		if v.Error != "" {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			var got []uint64
			i := 0
			for rd, err := range NewRequest(v.signal(t), v.Request).Resources() {
				if err != nil {
					t.Fatal(err)
				}
				res := must(rd.Resource())
				var keys []string
				distinct := map[string]bool{}
				for _, a := range v.Resources[i].Attributes {
					keys = append(keys, a.Key)
					distinct[a.Key] = true
				}
				for _, ver := range []HashVersion{HashV1, HashV2} {
					h, err := res.HashWith(ver)
					if err != nil {
						t.Fatal(err)
					}
					if len(keys) == 0 && h != 0 {
						t.Fatalf("resource %d: a resource without attributes hashes to %#x, want 0", i, h)
					}
					got = append(got, h)
					absent := make([]string, 64)
					for j := range absent {
						absent[j] = fmt.Sprintf("absent.%d", j)
					}
					for _, list := range [][]string{keys, append(keys, "absent"), append(absent, keys...), append(append(absent, keys...), keys...)} {
						hk, found, err := res.HashKeysWith(ver, list)
						if err != nil {
							t.Fatal(err)
						}
						if found != len(distinct) {
							t.Fatalf("resource %d: HashKeysWith(%d keys) found %d, want %d", i, len(list), found, len(distinct))
						}
						if len(distinct) == len(keys) && hk != h {
							t.Fatalf("resource %d, %v: HashKeysWith(%d keys: every key) = %#x, HashWith = %#x", i, ver, len(list), hk, h)
						}
					}
					if ver == HashV1 {
						if h1 := must(res.Hash()); h1 != h {
							t.Fatalf("Hash = %#x, HashWith(HashV1) = %#x", h1, h)
						}
						if h1, n1 := must2(res.HashKeys(keys)); n1 != len(distinct) || (len(distinct) == len(keys) && h1 != h) {
							t.Fatalf("HashKeys = %#x, %d", h1, n1)
						}
					}
				}
				i++
			}
			base, _, _ := strings.Cut(v.Name, "/")
			if base == "edge" {
				return
			}
			if want, ok := hashes[base]; ok && !slices.Equal(got, want) {
				t.Fatalf("hashes %#x differ from another encoding's %#x", got, want)
			}
			hashes[base] = got
		})
	}
}

func must2[A, B any](a A, b B, err error) (A, B) {
	if err != nil {
		panic(err)
	}
	return a, b
}
