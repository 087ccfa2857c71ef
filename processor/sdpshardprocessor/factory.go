// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/processor/processorhelper/xprocessorhelper"
	"go.opentelemetry.io/collector/processor/xprocessor"

	"github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"github.com/otelcol-sdp/otelcol-sdp/processor/sdpshardprocessor/internal/metadata"
)

// NewFactory returns the factory of the sdpshard processor.
//
// The traces, metrics, logs and profiles processors that one factory creates for the
// same component ID share one client (one connection) per shard; the clients
// start with the first of them and shut down with the last.
func NewFactory() xprocessor.Factory {
	reg := newRegistry()
	return xprocessor.NewFactory(
		metadata.Type,
		func() component.Config { return createDefaultConfig() },
		xprocessor.WithTraces(reg.createTraces, metadata.TracesStability),
		xprocessor.WithMetrics(reg.createMetrics, metadata.MetricsStability),
		xprocessor.WithLogs(reg.createLogs, metadata.LogsStability),
		xprocessor.WithProfiles(reg.createProfiles, metadata.ProfilesStability),
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

func (reg *registry) createProfiles(ctx context.Context, set processor.Settings, cfg component.Config, next xconsumer.Profiles) (xprocessor.Profiles, error) {
	p, err := reg.newProcessor(set, cfg.(*Config), otlpwire.SignalProfiles)
	if err != nil {
		return nil, err
	}
	return xprocessorhelper.NewProfiles(ctx, set, cfg, wirestageextension.PassOnProfiles(next, set.ID), p.processProfiles, p.profilesOptions()...)
}
