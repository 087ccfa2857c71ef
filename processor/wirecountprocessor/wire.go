// SPDX-License-Identifier: Apache-2.0

package wirecountprocessor // import "github.com/otelcol-sdp/otelcol-sdp/processor/wirecountprocessor"

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/consumer/consumererror"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// errSignalMismatch reports a request handed to the counter of another
// signal.
var errSignalMismatch = errors.New("wirecount: request signal does not match the processor's pipeline")

// wireResource is what the first pass over a request learns about one
// resource: where its group key ends in scratch.keys, its items and bytes.
type wireResource struct {
	keyEnd       int
	items, bytes int64
}

// countRequest meters one encoded Export{Trace,Metrics,Logs}ServiceRequest
// of signal sig, as a pre-decode path in front of the receiver sees it. It
// counts exactly what the pdata path counts for the same data: per resource,
// the items pdata would count and len of the encoded ResourceSpans,
// ResourceMetrics or ResourceLogs message.
//
// The request is walked completely before anything is recorded, so a
// malformed request (an error matching otlpwire.ErrMalformed, wrapped as
// permanent) or a refused one leaves the per-group counts untouched.
func (c *counter) countRequest(sig otlpwire.Signal, req []byte) error {
	if sig.String() != c.signal.String() {
		return fmt.Errorf("%w: got %s, want %s", errSignalMismatch, sig, c.signal)
	}
	s := c.getScratch()
	defer c.scratch.Put(s)

	total, err := c.walkRequest(s, otlpwire.NewRequest(sig, req))
	if err != nil {
		return consumererror.NewPermanent(fmt.Errorf("wirecount: counting %s request: %w", sig, err))
	}
	if err := c.checkRequestSize(total); err != nil {
		return err
	}
	start := 0
	for _, r := range s.resources {
		c.tally(s, c.lookup(s.keys[start:r.keyEnd]), r.items, r.bytes)
		start = r.keyEnd
	}
	c.record(s)
	return nil
}

// walkRequest fills s.keys and s.resources for every resource of r and
// returns the request's item count.
func (c *counter) walkRequest(s *scratch, r otlpwire.Request) (int, error) {
	s.keys = s.keys[:0]
	s.resources = s.resources[:0]
	total := 0
	for d, err := range r.Resources() {
		if err != nil {
			return 0, err
		}
		items, err := d.ItemCount()
		if err != nil {
			return 0, err
		}
		res, err := d.Resource()
		if err != nil {
			return 0, err
		}
		if s.keys, err = c.appendWireKey(s.keys, res); err != nil {
			return 0, err
		}
		total += items
		s.resources = append(s.resources, wireResource{keyEnd: len(s.keys), items: int64(items), bytes: int64(len(d.Bytes()))})
	}
	return total, nil
}

// appendWireKey appends the group key of a resource read from the wire,
// in the same encoding appendPdataKey uses.
func (c *counter) appendWireKey(dst []byte, res otlpwire.Resource) ([]byte, error) {
	for _, k := range c.groupBy {
		start := len(dst)
		v, ok, err := res.Attribute(k)
		switch {
		case err != nil:
			return dst, err
		case !ok:
			dst = append(dst, MissingValue...)
		default:
			dst = v.AppendText(dst)
		}
		dst = endKeyValue(dst, start)
	}
	return dst, nil
}
