// SPDX-License-Identifier: Apache-2.0

package sidecar

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// FileName returns the name of the file that mode file writes for a shard
// and signal number, e.g. "shard-0-traces.otlp".
func FileName(shard uint32, signal uint8) string {
	return fmt.Sprintf("shard-%d-%s.otlp", shard, signalName(signal))
}

// fileOptions configures a fileSink.
type fileOptions struct {
	// maxOpen bounds the files open at once; the least recently used idle
	// one is closed to open another.
	maxOpen int
	// idleAfter closes a file unused for this long.
	idleAfter time.Duration
	// durable makes Sync flush written records to stable storage before
	// the Acks that accept them.
	durable bool
}

// fileSink checks that each payload is an OTLP request of its frame's
// signal holding the items the frame declares, and appends it as a record:
// a 4-byte little-endian length, then the protobuf Export*ServiceRequest. A
// file only ever ends with a whole record, so that a reader never
// mis-frames what follows a failed write.
type fileSink struct {
	dir  string
	opts fileOptions
	// open opens a file for appending and returns its current size.
	open func(path string) (outputFile, int64, error)

	mu     sync.Mutex
	files  map[string]*recordFile
	closed bool

	// syncMu serialises syncs, so that a Sync that finds nothing dirty
	// returns only after a Sync in progress (which may cover its records)
	// has finished.
	syncMu sync.Mutex

	stop chan struct{}
	done chan struct{}
}

// outputFile is what a record file needs of an *os.File.
type outputFile interface {
	io.Writer
	Truncate(size int64) error
	Sync() error
	Close() error
}

type recordFile struct {
	mu  sync.Mutex
	f   outputFile
	buf []byte
	// size is where the last whole record ends.
	size int64
	// broken holds why a partly written record could not be removed; no
	// record is appended behind it.
	broken error

	// Guarded by fileSink.mu.
	users   int       // consume and sync calls using the file
	dirty   bool      // records written since the last sync (durable only)
	lastUse time.Time // when the last user let go
}

var errSinkClosed = errors.New("the sidecar is shutting down")

func newFileSink(dir string, opts fileOptions) (*fileSink, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating -dir: %w", err)
	}
	opts.maxOpen = max(opts.maxOpen, 1)
	if opts.idleAfter <= 0 {
		opts.idleAfter = time.Minute
	}
	s := &fileSink{dir: dir, opts: opts, open: openAppend, files: map[string]*recordFile{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go s.closeIdle()
	return s, nil
}

func openAppend(path string) (outputFile, int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, 0, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, info.Size(), nil
}

// acquire returns the open file name, opening it (and closing the least
// recently used idle file when maxOpen are open) if need be.
func (s *fileSink) acquire(name string) (*recordFile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errSinkClosed
	}
	if rf := s.files[name]; rf != nil {
		rf.users++
		return rf, nil
	}
	if len(s.files) >= s.opts.maxOpen {
		var oldest string
		for n, rf := range s.files {
			if rf.users == 0 && !rf.dirty && (oldest == "" || rf.lastUse.Before(s.files[oldest].lastUse)) {
				oldest = n
			}
		}
		if oldest == "" {
			return nil, fmt.Errorf("all %d output files allowed open (-max-open-files) are in use", s.opts.maxOpen)
		}
		s.closeLocked(oldest)
	}
	f, size, err := s.open(filepath.Join(s.dir, name))
	if err != nil {
		return nil, err
	}
	rf := &recordFile{f: f, size: size, users: 1}
	s.files[name] = rf
	return rf, nil
}

func (s *fileSink) release(rf *recordFile, wrote bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rf.users--
	rf.lastUse = time.Now()
	if wrote && s.opts.durable {
		rf.dirty = true
	}
}

// closeLocked closes an idle, clean file; its records are complete (and
// synced in durable mode), so an error closing it loses nothing.
func (s *fileSink) closeLocked(name string) {
	rf := s.files[name]
	delete(s.files, name)
	rf.f.Close()
}

// closeIdle closes files unused for idleAfter, until close.
func (s *fileSink) closeIdle() {
	defer close(s.done)
	t := time.NewTicker(max(s.opts.idleAfter/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			s.mu.Lock()
			for name, rf := range s.files {
				if rf.users == 0 && !rf.dirty && now.Sub(rf.lastUse) >= s.opts.idleAfter {
					s.closeLocked(name)
				}
			}
			s.mu.Unlock()
		}
	}
}

// openFiles returns the number of files open.
func (s *fileSink) openFiles() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.files)
}

// check accepts only a valid OTLP request of the frame's signal holding
// the items the frame declares.
func check(f *sdp.ResourceFrame) (ok bool, detail string) {
	sig := otlpwire.Signal(f.Signal)
	if !sig.Valid() {
		return false, fmt.Sprintf("mode file stores traces, metrics, logs and profiles, not %s", signalName(f.Signal))
	}
	n, err := otlpwire.NewRequest(sig, f.OTLP).ItemCount()
	if err != nil {
		return false, fmt.Sprintf("the payload is not a valid OTLP %s request: %v", sig, err)
	}
	if n != int(f.ItemCount) {
		return false, fmt.Sprintf("the payload holds %d items but the frame's item_count is %d", n, f.ItemCount)
	}
	return true, ""
}

func (s *fileSink) consume(f *sdp.ResourceFrame) (sdp.AckStatus, string) {
	if ok, detail := check(f); !ok {
		return sdp.AckRejected, detail
	}
	rf, err := s.acquire(FileName(f.Shard, f.Signal))
	if err != nil {
		return sdp.AckRetry, "opening output file: " + err.Error()
	}
	status, detail := rf.append(f.OTLP)
	s.release(rf, status == sdp.AckAccepted)
	return status, detail
}

func (rf *recordFile) append(otlp []byte) (sdp.AckStatus, string) {
	rf.mu.Lock()
	defer rf.mu.Unlock()
	if rf.broken != nil {
		return sdp.AckRetry, "output file unusable: " + rf.broken.Error()
	}
	rf.buf = binary.LittleEndian.AppendUint32(rf.buf[:0], uint32(len(otlp)))
	rf.buf = append(rf.buf, otlp...)
	// One write per record, so a record is never interleaved or split by
	// another write to the file.
	n, err := rf.f.Write(rf.buf)
	if err != nil {
		// Part of the record may be in the file: cut it off (appends go to
		// the new end), as the client sends the frame again.
		if terr := rf.f.Truncate(rf.size); terr != nil {
			rf.broken = fmt.Errorf("writing a record failed (%w) and removing its partial bytes too: %w", err, terr)
			return sdp.AckRetry, "output file unusable: " + rf.broken.Error()
		}
		return sdp.AckRetry, "writing output file: " + err.Error()
	}
	rf.size += int64(n)
	return sdp.AckAccepted, ""
}

// sync flushes every file written since the last sync to stable storage.
// It returns only when the records written before it was called are
// durable, or with an error (the files stay due for the next sync).
func (s *fileSink) sync() error {
	if !s.opts.durable {
		return nil
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.mu.Lock()
	var dirty []*recordFile
	for _, rf := range s.files {
		if rf.dirty {
			rf.dirty = false
			rf.users++
			dirty = append(dirty, rf)
		}
	}
	s.mu.Unlock()
	var errs []error
	failed := make([]bool, len(dirty))
	for i, rf := range dirty {
		if err := rf.f.Sync(); err != nil {
			errs = append(errs, err)
			failed[i] = true
		}
	}
	s.mu.Lock()
	for i, rf := range dirty {
		rf.users--
		rf.dirty = rf.dirty || failed[i]
	}
	s.mu.Unlock()
	return errors.Join(errs...)
}

// close syncs (in durable mode) and closes the files. A handler that
// outlived the server's shutdown may still call consume; it gets retry.
func (s *fileSink) close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.stop)
	var errs []error
	for _, rf := range s.files {
		if s.opts.durable {
			if err := rf.f.Sync(); err != nil {
				errs = append(errs, err)
			}
		}
		if err := rf.f.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	s.files = nil
	s.mu.Unlock()
	<-s.done
	return errors.Join(errs...)
}
