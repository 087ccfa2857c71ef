// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/otelcol-sdp/otelcol-sdp/extension/wirestageextension/internal/metadata"
)

// NewFactory returns the factory of the wirestage extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newWireStage(set, cfg.(*Config))
}
