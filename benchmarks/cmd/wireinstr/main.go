// SPDX-License-Identifier: Apache-2.0

// Command wireinstr runs one wirebench operation n times on one generated
// request, for counting instructions under valgrind's cachegrind, which
// (unlike wall-clock time on a shared machine) repeats to within about 2%:
//
//	go build -o /tmp/wireinstr ./benchmarks/cmd/wireinstr
//	for n in 200 400; do
//	  GOGC=off GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=no \
//	    --cachegrind-out-file=/dev/null /tmp/wireinstr -op lookup -n $n
//	done
//
// The difference of the two "I refs" totals divided by 200 is the cost of
// one operation: generating the request and starting the program cost the
// same in both runs and cancel out.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"

	"github.com/otelcol-sdp/otelcol-sdp/benchmarks/wirebench"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

func main() {
	op := flag.String("op", "lookup", "operation: count, walk-count, resources, walk-resources, lookup, walk-lookup, hash-v1, hash-v2, maphash")
	n := flag.Int("n", 200, "times to run the operation")
	sigName := flag.String("signal", "traces", "traces, metrics or logs")
	encName := flag.String("enc", "sdk", "pdata or sdk")
	flag.Parse()
	if err := run(*op, *n, *sigName, *encName); err != nil {
		fmt.Fprintln(os.Stderr, "wireinstr:", err)
		os.Exit(1)
	}
}

func run(op string, n int, sigName, encName string) error {
	i := slices.IndexFunc(wirebench.Signals, func(s otlpwire.Signal) bool { return s.String() == sigName })
	if i < 0 {
		return fmt.Errorf("unknown signal %q", sigName)
	}
	sig := wirebench.Signals[i]
	j := slices.IndexFunc(wirebench.Encodings, func(e wirebench.Encoding) bool { return e.String() == encName })
	if j < 0 {
		return fmt.Errorf("unknown encoding %q", encName)
	}
	enc := wirebench.Encodings[j]
	p, err := wirebench.Generate(sig, wirebench.Shape{Resources: 10, Scopes: 1, Items: 100, Attrs: 10}, enc)
	if err != nil {
		return err
	}
	b := p.Bytes
	maps, err := wirebench.PdataResourceAttrs(sig, b)
	if err != nil {
		return err
	}
	ops := map[string]func() (uint64, error){
		"count":          func() (uint64, error) { n, err := otlpwire.NewRequest(sig, b).ItemCount(); return uint64(n), err },
		"walk-count":     func() (uint64, error) { n, err := wirebench.WalkCount(sig, b); return uint64(n), err },
		"resources":      func() (uint64, error) { n, _, err := wirebench.WireResources(sig, b); return uint64(n), err },
		"walk-resources": func() (uint64, error) { n, _, err := wirebench.HandResources(b); return uint64(n), err },
		"lookup": func() (uint64, error) {
			n, _, err := wirebench.WireLookup(sig, b, wirebench.LookupKey)
			return uint64(n), err
		},
		"walk-lookup": func() (uint64, error) {
			n, _, err := wirebench.WalkLookup(b, wirebench.LookupKey)
			return uint64(n), err
		},
		"hash-v1": func() (uint64, error) { return wirebench.WireHash(sig, b, otlpwire.HashV1) },
		"hash-v2": func() (uint64, error) { return wirebench.WireHash(sig, b, otlpwire.HashV2) },
		"maphash": func() (uint64, error) { return wirebench.PdataMapHash(maps), nil },
	}
	f, ok := ops[op]
	if !ok {
		return fmt.Errorf("unknown operation %q", op)
	}
	var sink uint64
	for range n {
		v, err := f()
		if err != nil {
			return err
		}
		sink += v
	}
	fmt.Println(op, sink)
	return nil
}
