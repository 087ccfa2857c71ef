// SPDX-License-Identifier: Apache-2.0

package wirecountprocessor // import "github.com/otelcol-sdp/otelcol-sdp/processor/wirecountprocessor"

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/pipeline/xpipeline"

	"github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// stageHook connects a counter to the wirestage extensions that list its
// processor: the pre-decode path counts the raw request bytes with
// countRequest, and the pdata path skips what the stage already counted.
type stageHook struct {
	id         component.ID
	unregister func()
}

// wireSignals maps a pipeline's signal to the request signal the stage sees.
var wireSignals = map[pipeline.Signal]otlpwire.Signal{
	pipeline.SignalTraces:    otlpwire.SignalTraces,
	pipeline.SignalMetrics:   otlpwire.SignalMetrics,
	pipeline.SignalLogs:      otlpwire.SignalLogs,
	xpipeline.SignalProfiles: otlpwire.SignalProfiles,
}

func (c *counter) start(_ context.Context, host component.Host) error {
	unregister, _, err := wirestageextension.Register(host, c.stage.id, wireSignals[c.signal],
		wirestageextension.StageFunc(c.processRequest), false)
	if err != nil {
		return fmt.Errorf("wirecount %s: %w", c.stage.id, err)
	}
	c.stage.unregister = unregister
	return nil
}

func (c *counter) shutdownStage() {
	if c.stage.unregister != nil {
		c.stage.unregister()
		c.stage.unregister = nil
	}
}

// processRequest is the stage: it counts the request as the pdata path
// would count the same data, and keeps all of it.
func (c *counter) processRequest(_ context.Context, req otlpwire.Request) (wirestageextension.Result, error) {
	return wirestageextension.Result{}, c.countRequest(req.Signal(), req.Bytes())
}
