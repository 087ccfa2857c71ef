// SPDX-License-Identifier: Apache-2.0

package resolver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/config/configoptional"
)

func TestStaticReportsItsListOnce(t *testing.T) {
	rec := newRecorder(t)
	res := rec.start(Config{Static: configoptional.Some(StaticConfig{Endpoints: []string{
		"unix:///run/b.sock", "tcp://a:4319",
	}})}, rec.settings())
	select {
	case m := <-rec.updates:
		assert.Equal(t, endpoints("tcp://a:4319", "unix:///run/b.sock"), m)
	default:
		t.Fatal("Start returned before the first update")
	}
	rec.shutdown(res)
	rec.noUpdate()
}
