// SPDX-License-Identifier: Apache-2.0

package wirecountprocessor // import "github.com/otelcol-sdp/otelcol-sdp/processor/wirecountprocessor"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/xconsumer"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/pipeline/xpipeline"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/processor/processorhelper/xprocessorhelper"
	"go.opentelemetry.io/collector/processor/xprocessor"

	"github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension"
	"github.com/otelcol-sdp/otelcol-sdp/processor/wirecountprocessor/internal/metadata"
)

// readOnly tells the pipeline that the processor never changes the data, so
// a fan-out does not clone batches for it.
var readOnly = processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: false})

// NewFactory returns the factory of the wirecount processor.
func NewFactory() xprocessor.Factory {
	return xprocessor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		xprocessor.WithTraces(createTraces, metadata.TracesStability),
		xprocessor.WithMetrics(createMetrics, metadata.MetricsStability),
		xprocessor.WithLogs(createLogs, metadata.LogsStability),
		xprocessor.WithProfiles(createProfiles, metadata.ProfilesStability),
	)
}

func createDefaultConfig() component.Config {
	return &Config{
		GroupBy:   defaultGroupBy(),
		MaxGroups: defaultMaxGroups,
	}
}

func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	c, err := newCounter(set, cfg.(*Config), pipeline.SignalTraces)
	if err != nil {
		return nil, err
	}
	return processorhelper.NewTraces(ctx, set, cfg, wirestageextension.PassOnTraces(next, set.ID), c.processTraces, readOnly, processorhelper.WithStart(c.start), processorhelper.WithShutdown(c.shutdown))
}

func createMetrics(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Metrics) (processor.Metrics, error) {
	c, err := newCounter(set, cfg.(*Config), pipeline.SignalMetrics)
	if err != nil {
		return nil, err
	}
	return processorhelper.NewMetrics(ctx, set, cfg, wirestageextension.PassOnMetrics(next, set.ID), c.processMetrics, readOnly, processorhelper.WithStart(c.start), processorhelper.WithShutdown(c.shutdown))
}

func createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	c, err := newCounter(set, cfg.(*Config), pipeline.SignalLogs)
	if err != nil {
		return nil, err
	}
	return processorhelper.NewLogs(ctx, set, cfg, wirestageextension.PassOnLogs(next, set.ID), c.processLogs, readOnly, processorhelper.WithStart(c.start), processorhelper.WithShutdown(c.shutdown))
}

func createProfiles(ctx context.Context, set processor.Settings, cfg component.Config, next xconsumer.Profiles) (xprocessor.Profiles, error) {
	c, err := newCounter(set, cfg.(*Config), xpipeline.SignalProfiles)
	if err != nil {
		return nil, err
	}
	return xprocessorhelper.NewProfiles(ctx, set, cfg, wirestageextension.PassOnProfiles(next, set.ID), c.processProfiles,
		xprocessorhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		xprocessorhelper.WithStart(c.start), xprocessorhelper.WithShutdown(c.shutdown))
}
