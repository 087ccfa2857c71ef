// Package sidecar is the body of the reference sidecar, cmd/sdp-sidecar: it
// serves the SDP transport on one or more endpoints and counts, stores or
// forwards the OTLP payloads it receives.
package sidecar

import (
	"errors"
	"flag"
	"fmt"
	"io"
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
	return nil
}

// ParseFlags parses the command line of cmd/sdp-sidecar into a Config.
// Usage and errors go to output.
func ParseFlags(args []string, output io.Writer) (Config, error) {
	c := Config{}
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
	fs.StringVar(&c.Mode, "mode", ModeCount, "count, file or forward")
	fs.StringVar(&c.Dir, "dir", "", "directory for mode file")
	fs.StringVar(&c.ForwardEndpoint, "forward-endpoint", "", "OTLP/gRPC host:port for mode forward (plaintext)")
	fs.DurationVar(&c.ForwardTimeout, "forward-timeout", 10*time.Second, "timeout of each forwarded export")
	fs.DurationVar(&c.AckDelay, "ack-delay", 0, "delay before each Ack")
	status := fs.Uint("ack-status", 0, "answer every frame with this status without handling it: 0 accepted (handle normally), 1 retry, 2 rejected")
	fs.DurationVar(&c.StatsInterval, "stats-interval", 10*time.Second, "how often to print statistics and rewrite -stats-file; 0 only at exit")
	fs.StringVar(&c.StatsFile, "stats-file", "", "write JSON statistics to this file periodically and at exit")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
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
