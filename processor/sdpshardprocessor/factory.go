// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"github.com/otelcol-sdp/otelcol-sdp/processor/sdpshardprocessor/internal/metadata"
)

// NewFactory returns the factory of the sdpshard processor.
//
// The traces, metrics and logs processors that one factory creates for the
// same component ID share one client (one connection) per shard; the clients
// start with the first of them and shut down with the last.
func NewFactory() processor.Factory {
	reg := newRegistry()
	return processor.NewFactory(
		metadata.Type,
		func() component.Config { return createDefaultConfig() },
		processor.WithTraces(reg.createTraces, metadata.TracesStability),
		processor.WithMetrics(reg.createMetrics, metadata.MetricsStability),
		processor.WithLogs(reg.createLogs, metadata.LogsStability),
	)
}

func (reg *registry) createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	p, err := reg.newProcessor(set, cfg.(*Config), otlpwire.SignalTraces)
	if err != nil {
		return nil, err
	}
	return processorhelper.NewTraces(ctx, set, cfg, wirestageextension.PassOnTraces(next, set.ID), p.processTraces, p.options()...)
}

func (reg *registry) createMetrics(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Metrics) (processor.Metrics, error) {
	p, err := reg.newProcessor(set, cfg.(*Config), otlpwire.SignalMetrics)
	if err != nil {
		return nil, err
	}
	return processorhelper.NewMetrics(ctx, set, cfg, wirestageextension.PassOnMetrics(next, set.ID), p.processMetrics, p.options()...)
}

func (reg *registry) createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	p, err := reg.newProcessor(set, cfg.(*Config), otlpwire.SignalLogs)
	if err != nil {
		return nil, err
	}
	return processorhelper.NewLogs(ctx, set, cfg, wirestageextension.PassOnLogs(next, set.ID), p.processLogs, p.options()...)
}
