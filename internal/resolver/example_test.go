// SPDX-License-Identifier: Apache-2.0

package resolver_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/config/configoptional"

	"github.com/otelcol-sdp/otelcol-sdp/internal/resolver"
)

func ExampleNew() {
	cfg := resolver.Config{Static: configoptional.Some(resolver.StaticConfig{
		Endpoints: []string{"unix:///run/sdp/b.sock", "tcp://consumer-a:4319"},
	})}
	res, err := resolver.New(cfg, resolver.Settings{OnError: func(err error) { fmt.Println("resolver error:", err) }})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The first list arrives before Start returns; later ones from the
	// resolver's goroutine, one at a time.
	_ = res.Start(context.Background(), func(members []resolver.Member) {
		for i, m := range members {
			fmt.Println(i, m.ID, m.Endpoint)
		}
	})
	_ = res.Shutdown(context.Background())
	// Output:
	// 0 tcp://consumer-a:4319 tcp://consumer-a:4319
	// 1 unix:///run/sdp/b.sock unix:///run/sdp/b.sock
}
