// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"go.opentelemetry.io/collector/receiver/xreceiver"

	"github.com/otelcol-sdp/otelcol-sdp/internal/profilestest"
	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

var profilesShape = profilestest.Shape{
	Resources: 3, Scopes: 1, Profiles: 2, Samples: 25,
	Functions: 40, Locations: 80, Stacks: 50, Depth: 12,
}

// startProfilesRig starts the otlp receiver's profiles services with a
// stage that keeps resource 1 of every request, until the test ends.
func startProfilesRig(t *testing.T) (*rig, *stageRecorder, *consumertest.ProfilesSink) {
	t.Helper()
	r := newRig(t, divertConfig())
	s := &stageRecorder{divert: true, keep: []int{1}}
	unregister, _, err := Register(r.host, stageID, otlpwire.SignalProfiles, s, true)
	require.NoError(t, err)
	t.Cleanup(unregister)
	sink := new(consumertest.ProfilesSink)
	f, set, cfg := r.receiverConfig()
	recv, err := f.(xreceiver.Factory).CreateProfiles(context.Background(), set, cfg, sink)
	require.NoError(t, err)
	require.NoError(t, recv.Start(context.Background(), r.host))
	t.Cleanup(func() { require.NoError(t, recv.Shutdown(context.Background())) })
	return r, s, sink
}

// The stage sees a profiles request's bytes over gRPC and HTTP, and the
// receiver decodes only the resource it kept, with the dictionary its
// samples reference: the same resolved samples as in the request.
func TestProfiles(t *testing.T) {
	body := profilestest.Marshal(profilestest.Generate(9, profilesShape))
	want, err := profilestest.Unmarshal(body)
	require.NoError(t, err)
	wantSamples := profilestest.ResolvedSamples(want.Dictionary(), want.ResourceProfiles().At(1))
	for _, protocol := range []string{"grpc", "http"} {
		t.Run(protocol, func(t *testing.T) {
			r, s, sink := startProfilesRig(t)

			if protocol == "grpc" {
				req := pprofileotlp.NewExportRequest()
				require.NoError(t, req.UnmarshalProto(body))
				_, err = pprofileotlp.NewGRPCClient(dial(t, r.grpcAddr)).Export(context.Background(), req)
				require.NoError(t, err)
				// The client encodes the request anew; the stage saw it whole.
				require.Len(t, s.seen(), 1)
				n, err := otlpwire.NewRequest(otlpwire.SignalProfiles, s.seen()[0]).ItemCount()
				require.NoError(t, err)
				assert.Equal(t, want.SampleCount(), n)
			} else {
				resp, _ := r.postTo(pathProfiles, body)
				require.Equal(t, http.StatusOK, resp.StatusCode)
				assert.Equal(t, [][]byte{body}, s.seen())
			}
			require.Len(t, sink.AllProfiles(), 1)
			got := sink.AllProfiles()[0]
			require.Equal(t, 1, got.ResourceProfiles().Len())
			assert.True(t, slices.Equal(wantSamples, profilestest.ResolvedSamples(got.Dictionary(), got.ResourceProfiles().At(0))),
				"the kept resource's samples, resolved, differ from the request's")
		})
	}
}

// A profiles request declaring another development version of the layout
// is left to the receiver, which refuses it: no stage reads it.
func TestProfilesOfAnotherVersionAreNotStaged(t *testing.T) {
	r, s, sink := startProfilesRig(t)

	body := profilestest.Marshal(profilestest.Generate(9, profilesShape))
	req, err := http.NewRequest(http.MethodPost, r.httpURL+pathProfiles, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set(pprofileotlp.DevelopmentVersionHeader, "2")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Empty(t, s.seen())
	assert.Empty(t, sink.AllProfiles())
}
