package sidecar

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
)

// FileName returns the name of the file that mode file writes for a shard
// and signal number, e.g. "shard-0-traces.otlp".
func FileName(shard uint32, signal uint8) string {
	return fmt.Sprintf("shard-%d-%s.otlp", shard, signalName(signal))
}

// fileSink appends each payload as a record: a 4-byte little-endian length,
// then the protobuf Export*ServiceRequest. A file only ever ends with a whole
// record, so that a reader never mis-frames what follows a failed write.
type fileSink struct {
	dir string
	// open opens a file for appending and returns its current size.
	open func(path string) (outputFile, int64, error)

	mu     sync.Mutex
	files  map[string]*recordFile
	closed bool
}

// outputFile is what a record file needs of an *os.File.
type outputFile interface {
	io.Writer
	Truncate(size int64) error
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
}

var errSinkClosed = errors.New("the sidecar is shutting down")

func newFileSink(dir string) (*fileSink, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating -dir: %w", err)
	}
	return &fileSink{dir: dir, open: openAppend, files: map[string]*recordFile{}}, nil
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

func (s *fileSink) file(name string) (*recordFile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errSinkClosed
	}
	if rf := s.files[name]; rf != nil {
		return rf, nil
	}
	f, size, err := s.open(filepath.Join(s.dir, name))
	if err != nil {
		return nil, err
	}
	rf := &recordFile{f: f, size: size}
	s.files[name] = rf
	return rf, nil
}

func (s *fileSink) consume(f *sdp.ResourceFrame) (sdp.AckStatus, string) {
	rf, err := s.file(FileName(f.Shard, f.Signal))
	if err != nil {
		return sdp.AckRetry, "opening output file: " + err.Error()
	}
	rf.mu.Lock()
	defer rf.mu.Unlock()
	if rf.broken != nil {
		return sdp.AckRetry, "output file unusable: " + rf.broken.Error()
	}
	rf.buf = binary.LittleEndian.AppendUint32(rf.buf[:0], uint32(len(f.OTLP)))
	rf.buf = append(rf.buf, f.OTLP...)
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

// close closes the files. A handler that outlived the server's shutdown may
// still call consume; it gets retry.
func (s *fileSink) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first error
	for _, rf := range s.files {
		if err := rf.f.Close(); err != nil && first == nil {
			first = err
		}
	}
	s.files = nil
	s.closed = true
	return first
}
