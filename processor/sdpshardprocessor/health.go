package sdpshardprocessor

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.uber.org/zap"

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
type health struct {
	logger    *zap.Logger
	endpoints []string
	interval  time.Duration

	mu       sync.Mutex
	hosts    []component.Host
	down     []error // the reason a shard is disconnected; nil when connected or not tried yet
	failures []int   // failed attempts since the shard's last warning
	lastWarn []time.Time
	degraded bool // StatusRecoverableError was reported last
	stopped  bool

	refusals     map[string]int // refused batches by reason since the last warning
	refusalErr   error
	lastRefusals time.Time
}

func newHealth(logger *zap.Logger, endpoints []string) *health {
	n := len(endpoints)
	return &health{
		logger:    logger,
		endpoints: endpoints,
		interval:  warnInterval,
		down:      make([]error, n),
		failures:  make([]int, n),
		lastWarn:  make([]time.Time, n),
		refusals:  make(map[string]int),
	}
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
		h.logger.Info("Sidecar reachable again", zap.Uint32("shard", shard), zap.String("endpoint", h.endpoints[shard]),
			zap.Int("failed_attempts", h.failures[shard]))
	}
	h.down[shard] = nil
	h.failures[shard] = 0
	h.lastWarn[shard] = time.Time{}
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
			zap.Uint32("shard", shard), zap.String("endpoint", h.endpoints[shard]),
			zap.Int("failed_attempts", h.failures[shard]), zap.Error(err))
		h.lastWarn[shard] = now
		h.failures[shard] = 0
	}
	if !wasDown || !h.degraded {
		h.degraded = true
		h.reportLocked(componentstatus.NewRecoverableErrorEvent(
			fmt.Errorf("sidecar of shard %d (%s) %s: %w", shard, h.endpoints[shard], what, err)))
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
