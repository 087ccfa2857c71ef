// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"context"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// MaxLoggedPeerString bounds a string that a peer chose (a Hello sender,
// an Ack detail) where it appears in a log line or an error: the rest is
// cut off and replaced with a marker saying how long it was.
const MaxLoggedPeerString = 256

// Truncate returns s cut to at most MaxLoggedPeerString bytes of valid
// UTF-8 with a marker such as "…[truncated, 70000 bytes]" when it was
// longer, for logging strings a peer chose.
func Truncate(s string) string { return truncate(s, MaxLoggedPeerString) }

// truncate cuts s to at most limit bytes, marker included, at a rune
// boundary, and replaces invalid UTF-8.
func truncate(s string, limit int) string {
	if len(s) <= limit && utf8.ValidString(s) {
		return s
	}
	if len(s) <= limit {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	marker := "…[truncated, " + strconv.Itoa(len(s)) + " bytes]"
	cut := max(limit-len(marker), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	out := strings.ToValidUTF8(s[:cut], "\uFFFD")
	// Replacement characters can be longer than the bytes they replace.
	for len(out)+len(marker) > limit && len(out) > 0 {
		_, n := utf8.DecodeLastRuneInString(out)
		out = out[:len(out)-n]
	}
	return out + marker
}

// logEvery is the least time between two warnings of one kind that a
// rateLimiter lets through.
const logEvery = 10 * time.Second

// rateLimiter lets one warning of a kind through per logEvery and counts
// the ones it holds back, so that a flood of hostile connections cannot
// flood the log.
type rateLimiter struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// allow reports whether to log now and how many events were held back
// since the last one logged.
func (r *rateLimiter) allow(now time.Time) (ok bool, suppressed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.last.IsZero() && now.Sub(r.last) < logEvery {
		r.suppressed++
		return false, 0
	}
	r.last = now
	suppressed, r.suppressed = r.suppressed, 0
	return true, suppressed
}

// reset lets the next warning through at once.
func (r *rateLimiter) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last = time.Time{}
	r.suppressed = 0
}

// warn logs msg as a warning when r allows it, else at debug level. The
// record names the caller of warn as its source, not warn.
func (r *rateLimiter) warn(log *slog.Logger, msg string, attrs ...slog.Attr) {
	ok, suppressed := r.allow(time.Now())
	level := slog.LevelWarn
	if !ok {
		level = slog.LevelDebug
	} else if suppressed > 0 {
		attrs = append(attrs, slog.Int("similar_events_not_logged", suppressed))
	}
	ctx := context.Background()
	if !log.Enabled(ctx, level) {
		return
	}
	var pcs [1]uintptr
	runtime.Callers(2, pcs[:]) // skip runtime.Callers and warn
	rec := slog.NewRecord(time.Now(), level, msg, pcs[0])
	rec.AddAttrs(attrs...)
	_ = log.Handler().Handle(ctx, rec)
}
