// SPDX-License-Identifier: Apache-2.0

package wirecountprocessor

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pipeline/xpipeline"

	"github.com/otelcol-sdp/otelcol-sdp/internal/profilestest"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

// generateProfiles is a profiles request whose resources carry the
// attributes of the other signals' generated batches (fillResource) and
// share one dictionary.
func generateProfiles(r *rand.Rand, resources, samples int) []byte {
	pd := profilestest.Generate(r.Uint64(), profilestest.Shape{
		Resources: resources, Scopes: 2, Profiles: 2, Samples: samples,
		Functions: 30, Locations: 60, Stacks: 40, Depth: 10,
		Resource: func(r *rand.Rand, _ int, res pcommon.Resource) { fillResource(r, res) },
	})
	return profilestest.Marshal(pd)
}

// Profiles samples are counted per tenant alike on both paths: the wire
// path resolves the resource attributes that pdata's marshaller moved into
// the dictionary's string table, as the receiver does before the pdata
// path sees them.
func TestProfilesBytesPathMatchesPdataPath(t *testing.T) {
	for name, groupBy := range groupBys {
		t.Run(name, func(t *testing.T) {
			cfg := &Config{GroupBy: groupBy, MaxGroups: 5, MaxItemsPerRequest: 300}
			r := rand.New(rand.NewPCG(5, uint64(len(name))))
			ctx := context.Background()
			pair := newPathPair(t, cfg, xpipeline.SignalProfiles)
			var samples int
			for range 20 {
				b := generateProfiles(r, 1+r.IntN(6), r.IntN(30))
				// The pdata path sees what the receiver decodes.
				pd, err := profilestest.Unmarshal(b)
				require.NoError(t, err)
				_, pdataErr := pair.pdata.processProfiles(ctx, pd)
				assert.Equal(t, pdataErr, pair.wire.countRequest(otlpwire.SignalProfiles, b))
				if pdataErr == nil {
					samples += pd.SampleCount()
				}
			}
			refused := readSeries(t, pair.wireTT, refusedRequestsMetric)
			require.NotEmpty(t, refused, "the guard never fired; enlarge the batches")
			var counted int64
			for _, v := range readSeries(t, pair.wireTT, itemsMetric) {
				counted += v
			}
			assert.Equal(t, int64(samples), counted, "samples counted")
			// Bytes differ by design: the wire path counts the resource as
			// received (attributes as string-table references), the pdata
			// path pprofile's size of it as decoded (attributes inline).
			for _, m := range []string{itemsMetric, overflowGroupsMetric, refusedRequestsMetric, refusedItemsMetric} {
				assert.Equal(t, readSeries(t, pair.pdataTT, m), readSeries(t, pair.wireTT, m), m)
			}
			assert.Equal(t, len(readSeries(t, pair.pdataTT, bytesMetric)), len(readSeries(t, pair.wireTT, bytesMetric)), "bytes series")
		})
	}
}
