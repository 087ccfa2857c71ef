// SPDX-License-Identifier: Apache-2.0

package transport_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/otelcol-sdp/otelcol-sdp/sdp"
	"github.com/otelcol-sdp/otelcol-sdp/sdp/transport"
)

// A sidecar serves a unix socket; a client sends it frames, which settle
// when the sidecar's Ack arrives.
func Example() {
	dir, err := os.MkdirTemp("", "sdp-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	endpoint := "unix://" + filepath.Join(dir, "sidecar.sock")

	// The sidecar: accept every frame.
	l, err := transport.Listen(endpoint)
	if err != nil {
		fmt.Println(err)
		return
	}
	received := make(chan string, 1)
	srv := &transport.Server{Handler: transport.HandlerFunc(func(hello *sdp.Hello, f *sdp.ResourceFrame) (sdp.AckStatus, string) {
		received <- fmt.Sprintf("%s sent frame %d with %d items: %q", hello.Sender, f.Sequence, f.ItemCount, f.OTLP)
		return sdp.AckAccepted, ""
	})}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()

	// The collector's end.
	c, err := transport.NewClient(transport.ClientSettings{Endpoint: endpoint, Sender: "collector-0", Shard: 0, ShardCount: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	c.Start()
	frame := sdp.ResourceFrame{Signal: 1, ItemCount: 2, OTLP: []byte("otlp")}
	b, err := frame.AppendFrame(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	settled := make(chan error, 1)
	if err := c.Send([]transport.Frame{{Bytes: b, Items: 2}}, func(err error) { settled <- err }); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(<-received)
	fmt.Println("settled:", <-settled)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		fmt.Println(err)
	}
	if err := srv.Shutdown(ctx); err != nil {
		fmt.Println(err)
	}
	fmt.Println("serve:", <-served)
	// Output:
	// collector-0 sent frame 1 with 2 items: "otlp"
	// settled: <nil>
	// serve: transport: server closed
}
