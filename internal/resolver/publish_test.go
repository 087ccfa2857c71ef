// SPDX-License-Identifier: Apache-2.0

package resolver

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestNormalizeSortsAndDeduplicates(t *testing.T) {
	got := normalize(members(
		"c", "tcp://10.0.0.3:1",
		"a", "tcp://[fd00::1]:1",
		"b", "tcp://10.0.0.2:1",
		"a", "tcp://10.0.0.1:1", // same ID twice: the endpoint that sorts first wins
		"b", "tcp://10.0.0.2:1",
	))
	assert.Equal(t, members(
		"a", "tcp://10.0.0.1:1",
		"b", "tcp://10.0.0.2:1",
		"c", "tcp://10.0.0.3:1",
	), got)
}

func TestPublisherPassesOnChangesOnly(t *testing.T) {
	var calls [][]Member
	p := publisher{update: func(m []Member) { calls = append(calls, m) }}

	assert.True(t, p.publish(endpoints("b", "a")))
	assert.False(t, p.publish(endpoints("a", "b", "a")), "same members in another order")
	assert.True(t, p.publish(members("a", "x", "b", "b")), "a's endpoint changed")
	assert.True(t, p.publish(nil), "an empty list is a change")
	assert.False(t, p.publish([]Member{}))
	p.close()
	assert.False(t, p.publish(endpoints("a")), "closed")

	assert.Equal(t, [][]Member{endpoints("a", "b"), members("a", "x", "b", "b"), {}}, calls)

	// The first list is passed on even when empty.
	var first [][]Member
	q := publisher{update: func(m []Member) { first = append(first, m) }}
	assert.True(t, q.publish(nil))
	assert.Equal(t, [][]Member{{}}, first)
}

func TestPublisherGivesUpdateItsOwnCopy(t *testing.T) {
	var got []Member
	p := publisher{update: func(m []Member) { got = m }}
	p.publish(endpoints("a", "b"))
	got[0].ID = "changed by the receiver"
	assert.False(t, p.publish(endpoints("a", "b")), "the receiver's change is not the publisher's")
}

func TestErrorLogIsRateLimited(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	now := time.Unix(0, 0)
	var reported []error
	l := errorLog{logger: zap.New(core), onError: func(err error) { reported = append(reported, err) }, now: func() time.Time { return now }}

	boom := errors.New("boom")
	for range 5 {
		l.failed(boom)
		now = now.Add(time.Second)
	}
	assert.Len(t, reported, 5, "every error is reported")
	assert.Equal(t, 1, logs.Len(), "one log line within a minute")

	now = now.Add(errorLogEvery)
	l.failed(boom)
	assert.Equal(t, 2, logs.Len())
	assert.Equal(t, int64(4), logs.All()[1].ContextMap()["errors_not_logged"])

	l.succeeded()
	l.succeeded()
	assert.Equal(t, 3, logs.Len(), "one line for the recovery")
	assert.Equal(t, "Resolving the fleet's members works again", logs.All()[2].Message)

	l.failed(boom) // a new run of failures is logged at once
	assert.Equal(t, 4, logs.Len())
}
