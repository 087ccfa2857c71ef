// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/consumer/consumererror"

	"github.com/otelcol-sdp/otelcol-sdp/internal/shard"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// refuse counts a refused batch and returns err, marked permanent when
// retrying cannot help: every failure in err is a rejection for good. Callers
// pass such an err only when every frame of the batch has settled.
func (p *shardProcessor) refuse(ctx context.Context, err error) error {
	reason := reasonOf(err)
	p.refused(ctx, reason)
	err = fmt.Errorf("sdpshard: %w", err)
	p.shards.health.refused(reason, err)
	if reason == reasonRejected {
		return consumererror.NewPermanent(err)
	}
	return consumererror.NewRetryableError(err)
}

func (p *shardProcessor) refused(ctx context.Context, reason string) {
	// ctx may be cancelled already; the count must still be recorded.
	p.shards.telemetry.ProcessorSdpshardRefusedBatches.Add(context.WithoutCancel(ctx), 1, p.shards.obs.refusedAttrs[reason])
}

func reasonOf(err error) string {
	switch {
	case onlyRejected(err):
		return reasonRejected
	case errors.Is(err, transport.ErrProtocol):
		// The sidecar broke the protocol (such as an over-long Ack); the
		// batch stays retryable, see the README's "Protocol errors".
		return reasonProtocol
	case errors.Is(err, shard.ErrNoMembers):
		return reasonNoMembers
	case errors.Is(err, transport.ErrUndelivered):
		return reasonUndelivered
	case errors.Is(err, errStorage):
		return reasonStorage
	case errors.Is(err, transport.ErrClosed):
		return reasonClosed
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return reasonCanceled
	default:
		return reasonQueueFull
	}
}

// onlyRejected reports whether every error joined in err (the settle errors
// of frames, errors.Join-ed) is a rejection for good, so that none of them
// stands for a frame that was not delivered.
func onlyRejected(err error) bool {
	switch e := err.(type) {
	case nil:
		return false
	case interface{ Unwrap() []error }:
		errs := e.Unwrap()
		for _, inner := range errs {
			if !onlyRejected(inner) {
				return false
			}
		}
		return len(errs) > 0
	case interface{ Unwrap() error }:
		return onlyRejected(e.Unwrap())
	default:
		return err == transport.ErrRejected
	}
}
