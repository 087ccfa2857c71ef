// SPDX-License-Identifier: Apache-2.0

package sdpshardprocessor

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// warnInterval spaces the warnings about one sidecar that stays unreachable
// and about refused batches: the first one is logged at once, the next ones
// at most once per interval, each with what happened since the previous.
const warnInterval = 30 * time.Second

// health makes a dead or refusing sidecar visible: it reports the
// component's status (StatusRecoverableError while any shard is
// disconnected, StatusOK once all are connected again) to every host that
// started one of the shard set's processors, and logs rate-limited
// warnings.
//
// It tracks targets by slot: slot i is shard i of a static endpoints list;
// a resolver's fleet adds a slot per member client (addTarget) and frees it
// when the member leaves (removeTarget).
type health struct {
	logger   *zap.Logger
	interval time.Duration

	mu        sync.Mutex
	hosts     []component.Host
	endpoints []string    // per slot
	names     []zap.Field // per slot: shard index or member ID, for logs
	down      []error     // per slot: why it is disconnected; nil when connected, not tried yet or free
	failures  []int       // per slot: failed attempts since its last warning
	lastWarn  []time.Time
	free      []uint32 // slots of members that left, to reuse
	degraded  bool     // StatusRecoverableError was reported last
	stopped   bool

	refusals     map[string]int // refused batches by reason since the last warning
	refusalErr   error
	lastRefusals time.Time
}

func newHealth(logger *zap.Logger, endpoints []string) *health {
	h := &health{logger: logger, interval: warnInterval, refusals: make(map[string]int)}
	for i, endpoint := range endpoints {
		h.addTargetLocked(zap.Uint32("shard", uint32(i)), endpoint)
	}
	return h
}

// addTarget returns the slot of a new fleet member's client.
func (h *health) addTarget(memberID, endpoint string) uint32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.addTargetLocked(zap.String("member", memberID), endpoint)
}

func (h *health) addTargetLocked(name zap.Field, endpoint string) uint32 {
	if n := len(h.free); n > 0 {
		slot := h.free[n-1]
		h.free = h.free[:n-1]
		h.names[slot], h.endpoints[slot] = name, endpoint
		h.down[slot], h.failures[slot], h.lastWarn[slot] = nil, 0, time.Time{}
		return slot
	}
	h.names = append(h.names, name)
	h.endpoints = append(h.endpoints, endpoint)
	h.down = append(h.down, nil)
	h.failures = append(h.failures, 0)
	h.lastWarn = append(h.lastWarn, time.Time{})
	return uint32(len(h.names) - 1)
}

// removeTarget frees the slot of a member that left the fleet: its state no
// longer counts, so the component is OK again when the rest is connected.
func (h *health) removeTarget(slot uint32) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.down[slot] = nil
	h.free = append(h.free, slot)
	h.reportIfAllUpLocked()
}

// addHost registers a host to report status to.
func (h *health) addHost(host component.Host) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hosts = append(h.hosts, host)
}

// stop ends status reports: the processors are shutting down.
func (h *health) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = true
}

func (h *health) connected(shard uint32) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down[shard] != nil {
		h.logger.Info("Sidecar reachable again", h.names[shard], zap.String("endpoint", h.endpoints[shard]),
			zap.Int("failed_attempts", h.failures[shard]))
	}
	h.down[shard] = nil
	h.failures[shard] = 0
	h.lastWarn[shard] = time.Time{}
	h.reportIfAllUpLocked()
}

// reportIfAllUpLocked reports StatusOK when no slot is down any more after
// a degraded status.
func (h *health) reportIfAllUpLocked() {
	for _, err := range h.down {
		if err != nil {
			return
		}
	}
	if h.degraded {
		h.degraded = false
		h.reportLocked(componentstatus.NewEvent(componentstatus.StatusOK))
	}
}

func (h *health) disconnected(shard uint32, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	wasDown := h.down[shard] != nil
	h.down[shard] = err
	h.failures[shard]++
	// A sidecar that broke the protocol was reached: say so, not
	// "unreachable", so that the operator looks at the sidecar.
	what, msg := "unreachable", "Sidecar unreachable; frames for its shard are held and retried"
	if errors.Is(err, transport.ErrProtocol) {
		what, msg = "broke the protocol", "Sidecar broke the protocol (reason protocol); frames it did not settle are held and retried"
	}
	if now := time.Now(); now.Sub(h.lastWarn[shard]) >= h.interval {
		h.logger.Warn(msg,
			h.names[shard], zap.String("endpoint", h.endpoints[shard]),
			zap.Int("failed_attempts", h.failures[shard]), zap.Error(err))
		h.lastWarn[shard] = now
		h.failures[shard] = 0
	}
	if !wasDown || !h.degraded {
		h.degraded = true
		h.reportLocked(componentstatus.NewRecoverableErrorEvent(
			fmt.Errorf("sidecar of %s %s (%s) %s: %w", h.names[shard].Key, fieldValue(h.names[shard]), h.endpoints[shard], what, err)))
	}
}

func (h *health) reportLocked(ev *componentstatus.Event) {
	if h.stopped {
		return
	}
	for _, host := range h.hosts {
		componentstatus.ReportStatus(host, ev)
	}
}

// refused logs refused batches, at most once per interval, with the count
// per reason since the previous warning.
func (h *health) refused(reason string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refusals[reason]++
	h.refusalErr = err
	now := time.Now()
	if now.Sub(h.lastRefusals) < h.interval {
		return
	}
	fields := []zap.Field{zap.Error(h.refusalErr)}
	for r, n := range h.refusals {
		fields = append(fields, zap.Int("refused_"+r, n))
	}
	h.logger.Warn("Batches refused; clients are told to retry unless the reason is rejected or malformed", fields...)
	h.lastRefusals = now
	clear(h.refusals)
}

// fieldValue renders the value of a shard or member field.
func fieldValue(f zap.Field) string {
	if f.Type == zapcore.StringType {
		return f.String
	}
	return fmt.Sprint(f.Integer)
}
