// SPDX-License-Identifier: Apache-2.0

package transport

import (
	"errors"
	"math"
	"net"
	"sync/atomic"
	"time"
)

// errEvicted is why a connection that was closed to make room for another
// ended.
var errEvicted = errors.New("closed to make room for another connection")

// connState is what the Server tracks of an open connection. Its fields
// other than last are guarded by Server.mu.
type connState struct {
	accepted time.Time
	hello    bool  // its Hello has been read
	evicted  bool  // closed to make room for another connection
	budget   int64 // read budget held by its frame in progress
	served   bool  // a frame of it has been handled
	last     atomic.Int64
}

// leastUsefulLocked returns the connection that eligible accepts and that
// is least useful to keep: one that never completed a frame before one that
// did (a collector sends frames; a hostile peer stalls), then the one that
// has received nothing for the longest. Only a connection that has
// received nothing for quietGrace qualifies, so that a busy connection is
// never closed for another.
func (s *Server) leastUsefulLocked(eligible func(*connState) bool) (net.Conn, *connState) {
	now, grace := time.Now(), s.quietGraceOrDefault()
	var victim net.Conn
	var vst *connState
	for c, o := range s.conns {
		if !eligible(o) || now.Sub(o.lastRead()) < grace {
			continue
		}
		if vst == nil || (!o.served && vst.served) ||
			(o.served == vst.served && o.lastRead().Before(vst.lastRead())) {
			victim, vst = c, o
		}
	}
	return victim, vst
}

// touch records that bytes arrived now.
func (st *connState) touch() { st.touchAt(time.Now()) }

// touchAt records that bytes arrived at now, or that the connection, busy
// until now, waits for bytes from now on.
func (st *connState) touchAt(now time.Time) { st.last.Store(now.UnixNano()) }

// markBusy records that the connection's frames are being handled: until
// the next touch it counts as having received bytes just now.
func (st *connState) markBusy() { st.last.Store(busyConn) }

// busyConn is connState.last of a connection marked busy: the latest time
// there is, so that it is never quiet.
const busyConn = math.MaxInt64

// lastRead is when bytes last arrived (or when it was accepted); the
// latest time there is while the connection is busy.
func (st *connState) lastRead() time.Time { return time.Unix(0, st.last.Load()) }

// evictOldestWaitingLocked closes the connection that has waited longest
// for its Hello, if any, to make room for a new one: a collector sends its
// Hello at once, so at the limit a new connection is a better bet than one
// that has been silent, and a flood of silent connections cannot lock a
// collector out for a whole HelloTimeout. Only a connection that has waited
// quietGrace qualifies: otherwise a flood of new connections would evict
// each other's predecessor, a collector's reconnect included, before its
// Hello could arrive. Connections past their Hello are never evicted here.
func (s *Server) evictOldestWaitingLocked() bool {
	var oldest net.Conn
	var at time.Time
	grace := s.quietGraceOrDefault()
	for c, st := range s.conns {
		if !st.hello && time.Since(st.accepted) >= grace && (oldest == nil || st.accepted.Before(at)) {
			oldest, at = c, st.accepted
		}
	}
	if oldest == nil {
		return false
	}
	s.evictLocked(oldest, s.conns[oldest])
	return true
}

// evictLocked closes conn to make room for another connection.
func (s *Server) evictLocked(conn net.Conn, st *connState) {
	delete(s.conns, conn)
	st.evicted = true
	s.budgetEvicting += st.budget
	// Counted before the close, so that Stats already shows the eviction
	// when the evicted peer sees its connection end.
	s.stats.evicted.Add(1)
	conn.Close()
}

// errRefused is why a connection whose Hello found no room ended.
var errRefused = errors.New("refused after its Hello: the connection limit is reached and every connection completed a frame or received bytes within the last second")

// helloRead marks conn as past its Hello. When that puts the connections
// past their Hello over maxConns, the one that has received nothing for
// the longest of those that never completed a frame makes room, if that is
// at least quietGrace; otherwise conn is refused. It returns errEvicted when conn was evicted meanwhile.
func (s *Server) helloRead(conn net.Conn, maxConns int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.conns[conn]
	if st == nil {
		return errEvicted
	}
	st.touch()
	past := 0
	for _, o := range s.conns {
		if o.hello {
			past++
		}
	}
	if past >= maxConns {
		// Only a connection that never completed a frame makes room: one
		// that did is a collector's, however long it has been quiet
		// between batches, and a newcomer with no history is not worth
		// more. (Peers that send valid frames can still hold every slot;
		// only TLS client certificates keep those out.)
		victim, vst := s.leastUsefulLocked(func(o *connState) bool { return o.hello && !o.served })
		if vst == nil {
			delete(s.conns, conn)
			s.stats.refused.Add(1)
			return errRefused
		}
		s.evictLocked(victim, vst)
	}
	st.hello = true
	return nil
}

func (s *Server) quietGraceOrDefault() time.Duration {
	if s.quietGrace > 0 {
		return s.quietGrace
	}
	return defaultQuietGrace
}
