// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"

	"github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// stageHook connects a processor to the wirestage extensions that list it:
// the pre-decode path runs forward on the raw request bytes, the same
// function the pdata path runs on the bytes it marshals, and the pdata path
// skips requests the stage already forwarded.
type stageHook struct {
	id         component.ID
	unregister func()
}

// startStage registers p's stage with the wirestage extensions of host.
func (p *shardProcessor) startStage(host component.Host) error {
	unregister, _, err := wirestageextension.Register(host, p.stage.id, p.signal,
		wirestageextension.StageFunc(p.processRequest), p.mode == ModeDivert)
	if err != nil {
		return fmt.Errorf("sdpshard %s: %w", p.stage.id, err)
	}
	p.stage.unregister = unregister
	return nil
}

func (p *shardProcessor) shutdownStage() {
	if p.stage.unregister != nil {
		p.stage.unregister()
		p.stage.unregister = nil
	}
}

// processRequest is the stage: it frames and forwards the request's
// resources; in divert mode only the resources it could not frame stay.
func (p *shardProcessor) processRequest(ctx context.Context, req otlpwire.Request) (wirestageextension.Result, error) {
	keep, err := p.forward(ctx, req)
	if err != nil {
		return wirestageextension.Result{}, err
	}
	if p.mode == ModeTee {
		return wirestageextension.Result{}, nil
	}
	return wirestageextension.Result{Divert: true, Keep: keep}, nil
}
