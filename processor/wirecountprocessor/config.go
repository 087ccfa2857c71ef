// SPDX-License-Identifier: Apache-2.0

package wirecountprocessor // import "github.com/otelcol-sdp/otelcol-sdp/processor/wirecountprocessor"

import (
	"errors"
	"fmt"
	"strings"

	"github.com/otelcol-sdp/otelcol-sdp/internal/componenttelemetry"
)

// MissingValue is the group value used for a group_by key that the
// resource does not carry.
const MissingValue = "<missing>"

// OverflowValue is the value every group_by key takes in the overflow group,
// which counts the data of groups beyond max_groups.
const OverflowValue = "<overflow>"

// Default configuration values.
const (
	defaultMaxGroups = 1000
)

// defaultGroupBy returns the group_by used when none is configured: one
// group per service.
func defaultGroupBy() []string { return []string{"service.name"} }

// Config is the configuration of the wirecount processor.
type Config struct {
	// GroupBy lists the resource attribute keys whose values form a group.
	// Data of a resource that lacks a key is counted with MissingValue for
	// that key. An empty list counts everything in one group.
	GroupBy []string `mapstructure:"group_by"`

	// MaxGroups bounds the number of distinct groups the processor keeps
	// (and so the number of series per metric and signal). Data of further
	// groups is counted in one overflow group.
	MaxGroups int `mapstructure:"max_groups"`

	// MaxItemsPerRequest refuses, with a permanent error, requests holding
	// more items than this. Zero disables the guard.
	MaxItemsPerRequest int `mapstructure:"max_items_per_request"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Validate checks the configuration and names the offending field.
func (cfg *Config) Validate() error {
	var errs []error
	seen := make(map[string]int, len(cfg.GroupBy))
	for i, key := range cfg.GroupBy {
		switch {
		case strings.TrimSpace(key) == "":
			errs = append(errs, fmt.Errorf("group_by[%d]: key must not be empty", i))
			continue
		case componenttelemetry.IsInjectedKey(key):
			// The Collector identifies the processor's series under these
			// names (or the processor does, when the Collector does not):
			// a group value under the same name would hide or replace it.
			errs = append(errs, fmt.Errorf("group_by[%d]: key %q is reserved for the attributes that identify the processor's telemetry", i, key))
		}
		if first, dup := seen[key]; dup {
			errs = append(errs, fmt.Errorf("group_by[%d]: duplicate key %q (already group_by[%d])", i, key, first))
			continue
		}
		seen[key] = i
	}
	if cfg.MaxGroups <= 0 {
		errs = append(errs, fmt.Errorf("max_groups: must be greater than zero, got %d", cfg.MaxGroups))
	}
	if cfg.MaxItemsPerRequest < 0 {
		errs = append(errs, fmt.Errorf("max_items_per_request: must be zero (no limit) or positive, got %d", cfg.MaxItemsPerRequest))
	}
	return errors.Join(errs...)
}
