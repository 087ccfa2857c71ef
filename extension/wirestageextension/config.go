// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
)

const (
	defaultRetryAfter = time.Second
	// defaultGRPCStreamWorkers covers the requests a gateway typically has
	// in progress at once; more only hold idle stacks.
	defaultGRPCStreamWorkers = 16
	// maxGRPCStreamWorkers bounds the goroutines held idle.
	maxGRPCStreamWorkers = 4096
)

// Config configures the wirestage extension.
type Config struct {
	// Stages lists the processors (component IDs such as sdpshard/sidecars)
	// whose request-bytes stages run on each OTLP protobuf request, in this
	// order. Each listed processor registers its stage when it starts; a
	// processor that is not in any running pipeline simply has no stage.
	Stages []component.ID `mapstructure:"stages"`
	// DivertAllPipelines acknowledges that a diverting stage (sdpshard in
	// mode divert) removes the resources it forwards from the request before
	// the receiver decodes it, so none of the pipelines the receiver feeds
	// sees them, not only the pipeline the processor sits in. A diverting
	// stage refuses to start without it.
	DivertAllPipelines bool `mapstructure:"divert_all_pipelines"`
	// RetryAfter is what clients are told to wait before retrying a request
	// that a stage could not accept (HTTP Retry-After, gRPC RetryInfo).
	RetryAfter time.Duration `mapstructure:"retry_after"`
	// GRPCStreamWorkers is how many goroutines the receiver's gRPC server
	// keeps to run requests, each reused from one request to the next, so
	// that a request does not start a goroutine and grow its stack again
	// (grpc-go's NumStreamWorkers). A request that finds every worker busy
	// gets a goroutine of its own, as it would without workers: requests
	// never queue for a worker. 0 starts a goroutine for every request.
	GRPCStreamWorkers int `mapstructure:"grpc_stream_workers"`

	// prevent unkeyed literal initialization
	_ struct{}
}

func createDefaultConfig() component.Config {
	return &Config{RetryAfter: defaultRetryAfter, GRPCStreamWorkers: defaultGRPCStreamWorkers}
}

// Validate checks the configuration; every error names the offending field.
func (cfg *Config) Validate() error {
	var errs []error
	if len(cfg.Stages) == 0 {
		errs = append(errs, errors.New("stages: list at least one processor (e.g. sdpshard/sidecars) whose stage runs before the receiver decodes"))
	}
	seen := make(map[component.ID]int, len(cfg.Stages))
	for i, id := range cfg.Stages {
		if first, dup := seen[id]; dup {
			errs = append(errs, fmt.Errorf("stages[%d]: %q is already stages[%d]", i, id, first))
			continue
		}
		seen[id] = i
		if !stageTypes[id.Type().String()] {
			errs = append(errs, fmt.Errorf("stages[%d]: %q is not a processor with a request-bytes stage (want wirecount or sdpshard)", i, id))
		}
	}
	if cfg.RetryAfter <= 0 {
		errs = append(errs, fmt.Errorf("retry_after: must be positive, got %s", cfg.RetryAfter))
	}
	if cfg.GRPCStreamWorkers < 0 || cfg.GRPCStreamWorkers > maxGRPCStreamWorkers {
		errs = append(errs, fmt.Errorf("grpc_stream_workers: must be between 0 (a goroutine per request) and %d, got %d", maxGRPCStreamWorkers, cfg.GRPCStreamWorkers))
	}
	return errors.Join(errs...)
}

// stageTypes are the processor types that register a stage.
var stageTypes = map[string]bool{"wirecount": true, "sdpshard": true}
