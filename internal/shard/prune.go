// SPDX-License-Identifier: Apache-2.0

package shard

import (
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// prunedFrame frames the profiles resource rd alone with the request's
// dictionary pruned to what it references, when that request fits
// MaxFrameBytes. It reports false, framing nothing, when it does not: the
// caller then splits the resource with the whole dictionary.
func (r *Router) prunedFrame(rd otlpwire.ResourceData, frame *sdp.ResourceFrame, shard int, key uint64, dst *Frames) (bool, error) {
	items, err := otlpwire.WholeItemCount(rd)
	if err != nil {
		return false, err
	}
	if dst.prune == nil {
		dst.prune = new(otlpwire.PruneScratch)
	}
	// The pruned request is built in the scratch, reused for the next
	// resource.
	req, err := otlpwire.AppendRequestPruned(dst.pruned[:0], rd, dst.prune)
	dst.pruned = req
	if err != nil {
		return false, err
	}
	if len(req) > r.maxFrameBytes {
		return false, nil
	}
	if err := dst.addCopy(frame, shard, key, req, items); err != nil {
		return false, err
	}
	dst.Resources++
	return true, nil
}
