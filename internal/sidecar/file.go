package sidecar

import (
	"encoding/binary"
	"fmt"
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
// then the protobuf Export*ServiceRequest.
type fileSink struct {
	dir string

	mu    sync.Mutex
	files map[string]*recordFile
}

type recordFile struct {
	mu  sync.Mutex
	f   *os.File
	buf []byte
}

func newFileSink(dir string) (*fileSink, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating -dir: %w", err)
	}
	return &fileSink{dir: dir, files: map[string]*recordFile{}}, nil
}

func (s *fileSink) file(name string) (*recordFile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rf := s.files[name]; rf != nil {
		return rf, nil
	}
	f, err := os.OpenFile(filepath.Join(s.dir, name), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	rf := &recordFile{f: f}
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
	rf.buf = binary.LittleEndian.AppendUint32(rf.buf[:0], uint32(len(f.OTLP)))
	rf.buf = append(rf.buf, f.OTLP...)
	// One write per record, so a record is never interleaved or split by
	// another write to the file.
	if _, err := rf.f.Write(rf.buf); err != nil {
		return sdp.AckRetry, "writing output file: " + err.Error()
	}
	return sdp.AckAccepted, ""
}

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
	return first
}
