// SPDX-License-Identifier: Apache-2.0

package roundtrip

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// The shared mapping: the request word and the answer word on cache lines
// of their own, then the payload from the next page on. A request is a copy
// of the payload in, a store and a futex wake; its answer is awaited with
// futex waits on the answer word, so a side that finds nothing to do sleeps
// in the kernel as a socket reader would. The child copies each payload out
// before it answers, as a reader that must not trust memory the other side
// can still write would.
const (
	requestWord   = 0
	answerWord    = 64
	payloadOffset = 4096
	shmSize       = payloadOffset + maxPayload
	stopSequence  = ^uint32(0)
)

// shmPeer talks to its child through the shared mapping.
type shmPeer struct {
	cmd  *exec.Cmd
	mem  []byte
	req  *atomic.Uint32
	ans  *atomic.Uint32
	file *os.File
}

// mapShared maps the file at path shared, creating it at its full size
// first when create is set.
func mapShared(path string, create bool) (*os.File, []byte, error) {
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE | os.O_EXCL
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		return nil, nil, err
	}
	if create {
		if err := f.Truncate(shmSize); err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, shmSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, mem, nil
}

// words returns the request and answer words of the mapping.
func words(mem []byte) (req, ans *atomic.Uint32) {
	return (*atomic.Uint32)(unsafe.Pointer(&mem[requestWord])), (*atomic.Uint32)(unsafe.Pointer(&mem[answerWord]))
}

func startShm(dir string, size int) (peer, error) {
	f, mem, err := mapShared(filepath.Join(dir, "peer.shm"), true)
	if err != nil {
		return nil, err
	}
	cmd, err := startChild("shm", size, f.Name())
	if err != nil {
		_ = syscall.Munmap(mem)
		f.Close()
		return nil, err
	}
	req, ans := words(mem)
	return &shmPeer{cmd: cmd, mem: mem, req: req, ans: ans, file: f}, nil
}

func (p *shmPeer) roundTrip(seq uint32, payload []byte) (uint32, error) {
	copy(p.mem[payloadOffset:], payload)
	p.req.Store(seq)
	if err := futexWake(p.req); err != nil {
		return 0, err
	}
	for {
		v := p.ans.Load()
		if v == seq {
			return v, nil
		}
		if err := futexWait(p.ans, v); err != nil {
			return 0, err
		}
	}
}

func (p *shmPeer) pid() int { return p.cmd.Process.Pid }

func (p *shmPeer) close() error {
	p.req.Store(stopSequence)
	err := futexWake(p.req)
	return errors.Join(err, p.cmd.Wait(), syscall.Munmap(p.mem), p.file.Close())
}

func serveShm(path string, size int) error {
	f, mem, err := mapShared(path, false)
	if err != nil {
		return err
	}
	defer f.Close()
	defer syscall.Munmap(mem)
	req, ans := words(mem)
	payload := make([]byte, size)
	last := uint32(0)
	for {
		v := req.Load()
		if v == last {
			if err := futexWait(req, last); err != nil {
				return err
			}
			continue
		}
		if v == stopSequence {
			return nil
		}
		copy(payload, mem[payloadOffset:payloadOffset+size])
		ans.Store(v)
		if err := futexWake(ans); err != nil {
			return err
		}
		last = v
	}
}

// Futex operations on a shared mapping: without FUTEX_PRIVATE_FLAG, so that
// the two processes meet on the same word.
const (
	futexWaitOp = 0
	futexWakeOp = 1
)

// futexWait sleeps while *w == old. A wake-up, a changed value (EAGAIN) and
// an interrupted sleep (EINTR) all return nil: the caller looks again.
func futexWait(w *atomic.Uint32, old uint32) error {
	_, _, errno := syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWaitOp, uintptr(old), 0, 0, 0)
	switch errno {
	case 0, syscall.EAGAIN, syscall.EINTR:
		return nil
	}
	return fmt.Errorf("futex wait: %w", errno)
}

// futexWake wakes one sleeper on w, if any.
func futexWake(w *atomic.Uint32) error {
	_, _, errno := syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWakeOp, 1, 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("futex wake: %w", errno)
	}
	return nil
}
