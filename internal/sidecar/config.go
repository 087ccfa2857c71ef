// SPDX-License-Identifier: Apache-2.0

// Package sidecar is the body of the reference sidecar, cmd/sdp-sidecar: it
// serves the SDP transport on one or more endpoints and counts, stores or
// forwards the OTLP payloads it receives.
package sidecar

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// Modes of the sidecar.
const (
	// ModeCount counts frames, items and bytes.
	ModeCount = "count"
	// ModeFile appends each payload to a file per shard and signal.
	ModeFile = "file"
	// ModeForward forwards each payload, undecoded, to an OTLP/gRPC server.
	ModeForward = "forward"
)

// Config configures a Sidecar.
type Config struct {
	// Listen lists the endpoints to serve (see transport.ParseEndpoint).
	Listen []string
	// Mode is ModeCount, ModeFile or ModeForward.
	Mode string
	// Dir is where ModeFile writes its files.
	Dir string
	// ForwardEndpoint is the OTLP/gRPC server (host:port, plaintext) that
	// ModeForward sends to; ForwardTimeout bounds each export.
	ForwardEndpoint string
	ForwardTimeout  time.Duration
	// AckDelay delays every Ack.
	AckDelay time.Duration
	// AckStatus, when not AckAccepted, is answered to every frame instead
	// of handling it, to demonstrate the sender's retry or reject path.
	AckStatus sdp.AckStatus
	// StatsInterval is how often statistics are printed and the stats file
	// rewritten; zero means only at exit.
	StatsInterval time.Duration
	// StatsFile, if set, receives the JSON statistics (see Stats).
	StatsFile string
	// ReportNow, if set, makes Run report the statistics at once, as at
	// an interval, each time it receives a value. cmd/sdp-sidecar sends
	// SIGUSR1 there, so that a reader who needs current counts (the
	// end-to-end benchmark, an operator) asks for them when it needs them
	// instead of everyone paying a short interval.
	ReportNow <-chan os.Signal
	// MaxConns bounds the connections open at once across all endpoints.
	MaxConns int
	// HelloTimeout bounds the wait for a connection's Hello (and TLS
	// handshake); IdleTimeout closes a connection on which no frame
	// starts for that long; FrameTimeout closes one whose frame has not
	// arrived whole that long after its first byte.
	HelloTimeout, IdleTimeout, FrameTimeout time.Duration
	// ReadBudget bounds the bytes of all frames in progress beyond the
	// first 128 KiB of each (transport.Server.ReadBudget).
	ReadBudget int
	// SocketMode is the permission of the unix sockets.
	SocketMode os.FileMode
	// TLSCert and TLSKey are PEM files of the certificate and key that
	// tcp:// endpoints serve TLS with; TLSClientCA, if set, is a PEM file
	// of the CAs whose client certificates are required and verified.
	TLSCert, TLSKey, TLSClientCA string
	// Fsync makes mode file sync its files to stable storage before the
	// Acks that accept their records.
	Fsync bool
	// MaxOpenFiles bounds the files mode file holds open; FileIdleTimeout
	// closes a file unused for that long.
	MaxOpenFiles    int
	FileIdleTimeout time.Duration
	// CPUProfile, if set, is the file cmd/sdp-sidecar writes a CPU profile
	// of its whole run to (runtime/pprof), at exit; a Sidecar itself does
	// not use it.
	CPUProfile string
	// Logger receives events; nil logs nothing.
	Logger *zap.Logger
	// Out receives the printed statistics; nil prints nothing.
	Out io.Writer
}

// Validate reports the first problem with c.
func (c *Config) Validate() error {
	if len(c.Listen) == 0 {
		return errors.New("no endpoint to listen on: set -listen")
	}
	for _, e := range c.Listen {
		if _, _, err := transport.ParseEndpoint(e); err != nil {
			return err
		}
	}
	switch c.Mode {
	case ModeCount:
	case ModeFile:
		if c.Dir == "" {
			return errors.New("mode file needs -dir")
		}
	case ModeForward:
		if c.ForwardEndpoint == "" {
			return errors.New("mode forward needs -forward-endpoint")
		}
		if c.ForwardTimeout <= 0 {
			return errors.New("-forward-timeout must be positive")
		}
	default:
		return fmt.Errorf("unknown mode %q: want count, file or forward", c.Mode)
	}
	if c.AckStatus > sdp.AckRejected {
		return fmt.Errorf("ack status %d: want 0 (accepted), 1 (retry) or 2 (rejected)", c.AckStatus)
	}
	if c.AckDelay < 0 {
		return fmt.Errorf("-ack-delay %s: must not be negative", c.AckDelay)
	}
	if c.StatsInterval < 0 {
		return fmt.Errorf("-stats-interval %s: must not be negative", c.StatsInterval)
	}
	for _, d := range []struct {
		flag string
		val  time.Duration
	}{{"-hello-timeout", c.HelloTimeout}, {"-idle-timeout", c.IdleTimeout}, {"-frame-timeout", c.FrameTimeout}, {"-file-idle-timeout", c.FileIdleTimeout}} {
		if d.val < 0 {
			return fmt.Errorf("%s %s: must be positive", d.flag, d.val)
		}
	}
	if c.MaxConns < 0 {
		return fmt.Errorf("-max-conns %d: must be at least 1", c.MaxConns)
	}
	if c.ReadBudget != 0 && c.ReadBudget < sdp.DefaultMaxFrameSize {
		return fmt.Errorf("-read-budget %s: must hold at least one whole frame (%s)", formatSize(c.ReadBudget), formatSize(sdp.DefaultMaxFrameSize))
	}
	if c.MaxOpenFiles < 0 {
		return fmt.Errorf("-max-open-files %d: must be at least 1", c.MaxOpenFiles)
	}
	if c.SocketMode != 0 && (c.SocketMode&^os.ModePerm != 0 || c.SocketMode&0o600 != 0o600) {
		return fmt.Errorf("-socket-mode %#o: want permission bits that include owner read and write (0600), such as 0600 or 0660", uint32(c.SocketMode))
	}
	if c.Fsync && c.Mode != ModeFile {
		return fmt.Errorf("-fsync applies to mode file, not %s", c.Mode)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("-tls-cert and -tls-key go together: set both or neither")
	}
	if c.TLSClientCA != "" && c.TLSCert == "" {
		return errors.New("-tls-client-ca needs -tls-cert and -tls-key: client certificates are verified over TLS")
	}
	if c.TLSCert != "" {
		tcp := false
		for _, e := range c.Listen {
			network, _, _ := transport.ParseEndpoint(e)
			tcp = tcp || network == "tcp"
		}
		if !tcp {
			return errors.New("-tls-cert is set but no -listen endpoint is tcp://: TLS applies to tcp endpoints (unix sockets are protected by -socket-mode)")
		}
	}
	return nil
}

// withDefaults returns c with its zero limits and timeouts set to the
// defaults.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	c.MaxConns = cmp.Or(c.MaxConns, d.MaxConns)
	c.HelloTimeout = cmp.Or(c.HelloTimeout, d.HelloTimeout)
	c.IdleTimeout = cmp.Or(c.IdleTimeout, d.IdleTimeout)
	c.FrameTimeout = cmp.Or(c.FrameTimeout, d.FrameTimeout)
	c.ReadBudget = cmp.Or(c.ReadBudget, d.ReadBudget)
	c.SocketMode = cmp.Or(c.SocketMode, d.SocketMode)
	c.MaxOpenFiles = cmp.Or(c.MaxOpenFiles, d.MaxOpenFiles)
	c.FileIdleTimeout = cmp.Or(c.FileIdleTimeout, d.FileIdleTimeout)
	return c
}

// DefaultConfig returns the defaults of every flag. In a Config used
// directly, zero limits and timeouts also mean these defaults.
func DefaultConfig() Config {
	return Config{
		Mode:            ModeCount,
		ForwardTimeout:  10 * time.Second,
		StatsInterval:   10 * time.Second,
		MaxConns:        transport.DefaultMaxConns,
		HelloTimeout:    transport.DefaultHelloTimeout,
		IdleTimeout:     transport.DefaultIdleTimeout,
		FrameTimeout:    transport.DefaultFrameTimeout,
		ReadBudget:      transport.DefaultReadBudget,
		SocketMode:      transport.DefaultSocketMode,
		MaxOpenFiles:    DefaultMaxOpenFiles,
		FileIdleTimeout: DefaultFileIdleTimeout,
	}
}

// Defaults of mode file.
const (
	// DefaultMaxOpenFiles bounds the files mode file holds open.
	DefaultMaxOpenFiles = 64
	// DefaultFileIdleTimeout closes a file mode file has not written for
	// this long.
	DefaultFileIdleTimeout = time.Minute
)

// ParseFlags parses the command line of cmd/sdp-sidecar into a Config.
// Usage and errors go to output.
func ParseFlags(args []string, output io.Writer) (Config, error) {
	c := DefaultConfig()
	fs := flag.NewFlagSet("sdp-sidecar", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.Func("listen", "endpoint to serve, unix:///path or tcp://host:port; repeat the flag or separate endpoints with commas", func(v string) error {
		for e := range strings.SplitSeq(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				c.Listen = append(c.Listen, e)
			}
		}
		return nil
	})
	fs.StringVar(&c.Mode, "mode", c.Mode, "count, file or forward")
	fs.StringVar(&c.Dir, "dir", "", "directory for mode file")
	fs.StringVar(&c.ForwardEndpoint, "forward-endpoint", "", "OTLP/gRPC host:port for mode forward (plaintext)")
	durationVar(fs, &c.ForwardTimeout, "forward-timeout", c.ForwardTimeout, "`duration` of each forwarded export before it times out")
	durationVar(fs, &c.AckDelay, "ack-delay", 0, "`duration` to wait before each Ack")
	status := fs.Uint("ack-status", 0, "answer every frame with this status without handling it: 0 accepted (handle normally), 1 retry, 2 rejected")
	durationVar(fs, &c.StatsInterval, "stats-interval", c.StatsInterval, "`interval` at which to print statistics and rewrite -stats-file; 0s only at exit")
	fs.StringVar(&c.StatsFile, "stats-file", "", "write JSON statistics to this file periodically and at exit")
	fs.IntVar(&c.MaxConns, "max-conns", c.MaxConns, "connections past their Hello open at once across all endpoints; at the limit a new Hello replaces the least useful quiet connection, else it is refused")
	durationVar(fs, &c.HelloTimeout, "hello-timeout", c.HelloTimeout, "close a connection that has not sent its Hello (and finished TLS) within this `duration`")
	durationVar(fs, &c.IdleTimeout, "idle-timeout", c.IdleTimeout, "close a connection on which no frame starts for this `duration`")
	durationVar(fs, &c.FrameTimeout, "frame-timeout", c.FrameTimeout, "close a connection whose frame has not arrived whole this `duration` after its first byte")
	fs.Func("read-budget", "`size` of all frames in progress together beyond 128 KiB each, in bytes or with a KiB, MiB or GiB suffix (default 64MiB)", func(v string) error {
		n, err := parseSize(v)
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.New("must be positive")
		}
		c.ReadBudget = n
		return nil
	})
	fs.Func("socket-mode", "permission `mode` of unix sockets, octal: 0600 owner only, 0660 owner and group (default 0600)", func(v string) error {
		m, err := strconv.ParseUint(v, 8, 32)
		if err != nil {
			return fmt.Errorf("want an octal mode such as 0600 or 0660")
		}
		c.SocketMode = os.FileMode(m)
		return nil
	})
	fs.StringVar(&c.TLSCert, "tls-cert", "", "PEM certificate (chain) that tcp:// endpoints serve TLS with; needs -tls-key")
	fs.StringVar(&c.TLSKey, "tls-key", "", "PEM private key of -tls-cert")
	fs.StringVar(&c.TLSClientCA, "tls-client-ca", "", "PEM CA certificates: require a client certificate signed by one of them on tcp:// endpoints")
	fs.BoolVar(&c.Fsync, "fsync", false, "mode file: sync files to stable storage before acknowledging the frames written to them")
	fs.IntVar(&c.MaxOpenFiles, "max-open-files", c.MaxOpenFiles, "mode file: files held open at once; the least recently used idle one is closed to open another")
	durationVar(fs, &c.FileIdleTimeout, "file-idle-timeout", c.FileIdleTimeout, "mode file: close a file not written for this `duration`")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of the whole run to this `file` at exit (go tool pprof reads it)")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	// On the command line a zero limit or timeout is refused rather than
	// read as the default: it would say "no limit".
	var zero []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "max-conns", "hello-timeout", "idle-timeout", "frame-timeout", "max-open-files", "file-idle-timeout":
			if v := f.Value.String(); v == "0" || v == "0s" || strings.HasPrefix(v, "-") {
				zero = append(zero, fmt.Sprintf("-%s %s: must be positive", f.Name, v))
			}
		}
	})
	if len(zero) > 0 {
		return Config{}, errors.New(zero[0])
	}
	if *status > uint(sdp.AckRejected) {
		return Config{}, fmt.Errorf("-ack-status %d: want 0, 1 or 2", *status)
	}
	c.AckStatus = sdp.AckStatus(*status)
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// durationValue is a flag.Value of a time.Duration whose parse errors say
// what is wrong, e.g. `time: missing unit in duration "5"`: a bare number
// is refused, never read as nanoseconds.
type durationValue struct{ d *time.Duration }

func (v durationValue) String() string {
	if v.d == nil {
		return "0s"
	}
	return v.d.String()
}

func (v durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%v (write a unit: 500ms, 10s, 5m)", strings.TrimPrefix(err.Error(), "time: "))
	}
	*v.d = d
	return nil
}

// durationVar defines a duration flag with default value (p is set to it).
func durationVar(fs *flag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var(durationValue{p}, name, usage)
}

// parseSize reads a byte count: digits, optionally followed by KiB, MiB or
// GiB.
func parseSize(v string) (int, error) {
	mult := 1
	num := v
	for _, u := range []struct {
		suffix string
		mult   int
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if s, ok := strings.CutSuffix(v, u.suffix); ok {
			num, mult = s, u.mult
			break
		}
	}
	n, err := strconv.ParseUint(num, 10, 31)
	if err != nil || uint64(n)*uint64(mult) > math.MaxInt32 {
		return 0, fmt.Errorf("want a size in bytes such as 67108864 or 64MiB (at most 2GiB-1)")
	}
	return int(n) * mult, nil
}

// formatSize writes n in the largest binary unit that divides it.
func formatSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n)
}

// Memory terms of the bound that cmd/sdp-sidecar/README.md states: the
// process, each connection's heap (a few KiB of buffers, goroutine, TLS
// state and collection slack) and its read space outside the heap. The
// heap term was 192 KiB while a connection also held a 64 KiB read buffer
// in the heap; that buffer is now part of the read space.
const (
	baseMemory       = 32 << 20
	connHeapMemory   = 128 << 10
	connMappedMemory = transport.FreeFrameBytes
	probationConns   = 1
)

// HeapLimit is the soft limit for the Go heap that the bound on the
// sidecar's memory allows: 32 MiB plus 128 KiB per connection. Frames are
// read outside the heap: 128 KiB per connection, and beyond that under
// -read-budget. cmd/sdp-sidecar sets it as the runtime's memory limit
// (unless GOMEMLIMIT is set), so that garbage left by connections that
// came and went is collected before the heap outgrows it.
func (c Config) HeapLimit() int64 {
	conns := int64(cmp.Or(c.MaxConns, transport.DefaultMaxConns) + probationConns)
	return baseMemory + conns*connHeapMemory
}

// MemoryBound is the most resident memory the sidecar needs with c's
// limits: HeapLimit, each connection's 128 KiB of read space, and
// -read-budget. That is 32 MiB + (max-conns + 1) × 256 KiB + read-budget.
func (c Config) MemoryBound() int64 {
	conns := int64(cmp.Or(c.MaxConns, transport.DefaultMaxConns) + probationConns)
	return c.HeapLimit() + conns*connMappedMemory + int64(cmp.Or(c.ReadBudget, transport.DefaultReadBudget))
}
