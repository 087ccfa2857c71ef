// SPDX-License-Identifier: Apache-2.0

// Package wirestageconverter checks, in `validate` as well as at start,
// that a Collector configuration using the wirestage extension is one the
// Collector will run.
//
// The wirestage extension can only check its pipelines once the Collector
// starts (extensioncapabilities.ConfigSnapshotWatcher), and a diverting
// sdpshard is only refused when it registers its stage; `validate` creates
// no component and so passed such configurations. A confmap.Converter sees
// the whole resolved configuration in both commands: this one runs
// wirestageextension.CheckConfig, the same checks the extension runs at
// start, and answers for sdpshard whether a processor diverts. It changes
// nothing in the configuration.
//
// Build it into a distribution with ocb's `converters:` list.
package wirestageconverter // import "github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension/wirestageconverter"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/processor"

	"github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension"
	"github.com/otelcol-sdp/otelcol-sdp/processor/sdpshardprocessor"
)

// NewFactory returns the factory of the converter.
func NewFactory() confmap.ConverterFactory {
	return confmap.NewConverterFactory(func(confmap.ConverterSettings) confmap.Converter {
		return &converter{sdpshard: sdpshardprocessor.NewFactory()}
	})
}

type converter struct {
	sdpshard processor.Factory
}

// Convert refuses conf when a wirestage extension in it would refuse to
// start; conf itself is left as it is.
func (c *converter) Convert(_ context.Context, conf *confmap.Conf) error {
	return wirestageextension.CheckConfig(conf, c.diverts)
}

// diverts decodes an sdpshard processor's section as the processor does
// and reports whether it diverts. A section that does not decode is the
// processor's own error, which the Collector reports naming it.
func (c *converter) diverts(id component.ID, section *confmap.Conf) (bool, error) {
	if id.Type() != c.sdpshard.Type() {
		return false, nil
	}
	cfg, ok := c.sdpshard.CreateDefaultConfig().(*sdpshardprocessor.Config)
	if !ok {
		return false, nil
	}
	if err := section.Unmarshal(cfg); err != nil {
		return false, err
	}
	return cfg.Mode == sdpshardprocessor.ModeDivert, nil
}
