// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// testLogger logs at level and above to t.
func testLogger(t *testing.T, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: level}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// observeLogs returns a logger that records every entry at level and above,
// and the recorded entries.
func observeLogs(level slog.Level) (*slog.Logger, *observedLogs) {
	o := &observedLogs{}
	return slog.New(&recordingHandler{o: o, level: level}), o
}

// logEntry is one recorded log line.
type logEntry struct {
	Level   slog.Level
	Message string
	fields  map[string]any
}

// ContextMap returns the entry's attributes, those of With included.
func (e logEntry) ContextMap() map[string]any { return e.fields }

// observedLogs holds recorded entries; the Filter methods return snapshots.
type observedLogs struct {
	mu      sync.Mutex
	entries []logEntry
}

func (o *observedLogs) All() []logEntry {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]logEntry(nil), o.entries...)
}

func (o *observedLogs) Len() int { return len(o.All()) }

func (o *observedLogs) filter(keep func(logEntry) bool) *observedLogs {
	out := &observedLogs{}
	for _, e := range o.All() {
		if keep(e) {
			out.entries = append(out.entries, e)
		}
	}
	return out
}

func (o *observedLogs) FilterMessage(msg string) *observedLogs {
	return o.filter(func(e logEntry) bool { return e.Message == msg })
}

func (o *observedLogs) FilterMessageSnippet(s string) *observedLogs {
	return o.filter(func(e logEntry) bool { return strings.Contains(e.Message, s) })
}

func (o *observedLogs) FilterLevelExact(l slog.Level) *observedLogs {
	return o.filter(func(e logEntry) bool { return e.Level == l })
}

// recordingHandler is the slog.Handler behind observeLogs.
type recordingHandler struct {
	o     *observedLogs
	level slog.Level
	attrs []slog.Attr
}

func (h *recordingHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	e := logEntry{Level: r.Level, Message: r.Message, fields: map[string]any{}}
	for _, a := range h.attrs {
		e.fields[a.Key] = fieldValue(a)
	}
	r.Attrs(func(a slog.Attr) bool {
		e.fields[a.Key] = fieldValue(a)
		return true
	})
	h.o.mu.Lock()
	h.o.entries = append(h.o.entries, e)
	h.o.mu.Unlock()
	return nil
}

func (h *recordingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &recordingHandler{o: h.o, level: h.level, attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
}

// fieldValue is a's value as the tests compare it: errors by their text.
func fieldValue(a slog.Attr) any {
	v := a.Value.Resolve().Any()
	if err, ok := v.(error); ok {
		return err.Error()
	}
	return v
}

// WithGroup is not used by the package; groups are flattened.
func (h *recordingHandler) WithGroup(string) slog.Handler { return h }
