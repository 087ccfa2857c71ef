// SPDX-License-Identifier: Apache-2.0

package resolver

import (
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
)

// publisher hands member lists to the update callback: only lists that
// differ from the last one, one call at a time, and none once closed.
type publisher struct {
	// keepLastOnEmpty holds back an empty list (Config.KeepLastOnEmpty),
	// logged to logger.
	keepLastOnEmpty bool
	logger          *zap.Logger

	mu     sync.Mutex
	update func([]Member)
	last   []Member
	sent   bool
	closed bool
}

// publish normalises members and passes them on if they changed. It
// reports whether update was called. An empty list after a non-empty one
// is passed on too, unless keepLastOnEmpty is set.
func (p *publisher) publish(members []Member) bool {
	members = normalize(members)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.update == nil || (p.sent && slices.Equal(p.last, members)) {
		return false
	}
	if len(members) == 0 && p.keepLastOnEmpty && p.sent {
		if p.logger != nil {
			p.logger.Warn("The fleet's source lists no member; keeping the last list (keep_last_on_empty)", zap.Int("members", len(p.last)))
		}
		return false
	}
	p.last, p.sent = members, true
	// update owns its copy, never nil: the receiver may keep or change it.
	p.update(append(make([]Member, 0, len(members)), members...))
	return true
}

// close makes every later publish a no-op; once it returns, no update
// call is running.
func (p *publisher) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}

// errorLog reports resolution errors: every one to OnError, and to the log
// the first of a run of failures, then at most one per errorLogEvery with
// the count of those left out, then the recovery.
type errorLog struct {
	logger  *zap.Logger
	onError func(error)
	now     func() time.Time

	mu         sync.Mutex
	failing    bool
	lastLogged time.Time
	suppressed int
}

// errorLogEvery is the least time between two logged resolution errors.
const errorLogEvery = time.Minute

func (l *errorLog) failed(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.onError != nil {
		l.onError(err)
	}
	now := l.now()
	if l.failing && now.Sub(l.lastLogged) < errorLogEvery {
		l.suppressed++
		return
	}
	l.logger.Warn("Resolving the fleet's members failed; keeping the last list", zap.Error(err), zap.Int("errors_not_logged", l.suppressed))
	l.failing, l.lastLogged, l.suppressed = true, now, 0
}

func (l *errorLog) succeeded() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failing {
		l.logger.Info("Resolving the fleet's members works again", zap.Int("errors_not_logged", l.suppressed))
		l.failing, l.suppressed = false, 0
	}
}
