// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/confmap"
)

const (
	// defaultSendLingerNoAck is send_linger's default with wait_for_ack:
	// false. Chosen by measurement (benchmarks/RESULTS.md, "Frames batched
	// per member"): long enough that a member of a large fleet receives
	// the frames of several requests in one write, short enough that a
	// frame reaches its sidecar within a few milliseconds.
	defaultSendLingerNoAck = 5 * time.Millisecond
	// maxSendLinger bounds send_linger: a linger is meant to be
	// milliseconds, and frames held longer age towards ack and stall
	// timeouts without having been sent.
	maxSendLinger = time.Second
)

// sendLinger is the linger of every member's client: send_linger when set,
// else its default for wait_for_ack.
func (cfg *Config) sendLinger() time.Duration {
	if cfg.SendLinger != nil {
		return *cfg.SendLinger
	}
	if cfg.WaitForAck {
		return 0
	}
	return defaultSendLingerNoAck
}

// validateSend checks send_linger and send_batch_bytes; errors name the
// field.
func (cfg *Config) validateSend() []error {
	var errs []error
	if l := cfg.SendLinger; l != nil {
		switch {
		case *l < 0:
			errs = append(errs, fmt.Errorf("send_linger: must not be negative, got %s", *l))
		case *l > maxSendLinger:
			errs = append(errs, fmt.Errorf("send_linger: %s is over %s; a linger holds frames unsent and is meant to be milliseconds", *l, maxSendLinger))
		}
		if e := cfg.Ejection.Get(); e != nil && e.StallTimeout > 0 && *l >= e.StallTimeout {
			errs = append(errs, fmt.Errorf("send_linger: %s is not shorter than ejection::stall_timeout %s; a member would look stalled while its frames linger", *l, e.StallTimeout))
		}
	}
	if cfg.SendBatchBytes < 0 {
		errs = append(errs, fmt.Errorf("send_batch_bytes: must not be negative, got %d", cfg.SendBatchBytes))
	}
	return errs
}

// durationFields are the keys of the Config fields of type time.Duration.
var durationFields = []string{"dial_timeout", "initial_backoff", "max_backoff", "write_timeout", "ack_timeout", "flush_timeout", "send_linger",
	"ejection::stall_timeout", "ejection::probe_interval"}

var _ confmap.Unmarshaler = (*Config)(nil)

// Unmarshal refuses a duration written as a bare number. The Collector's
// decoder would take `dial_timeout: 5` as 5 nanoseconds; a duration must
// carry its unit ("5s", "100ms").
func (cfg *Config) Unmarshal(conf *confmap.Conf) error {
	var errs []error
	for _, key := range durationFields {
		switch v := conf.Get(key).(type) {
		case nil, string, time.Duration:
		default:
			errs = append(errs, fmt.Errorf("%s: %v has no unit; write a duration such as \"5s\" or \"100ms\"", key, v))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return conf.Unmarshal(cfg)
}
