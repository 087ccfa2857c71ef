// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

func divertConfig() *Config {
	return &Config{Stages: []component.ID{countID, stageID}, DivertAllPipelines: true, RetryAfter: 2 * time.Second}
}

// register registers s for traces as the stage of id.
func register(t *testing.T, r *rig, id component.ID, s Stage, diverts bool) {
	t.Helper()
	unregister, n, err := Register(r.host, id, otlpwire.SignalTraces, s, diverts)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	t.Cleanup(unregister)
}

func TestDivertNeedsAcknowledgement(t *testing.T) {
	r := newRig(t, &Config{Stages: []component.ID{stageID}, RetryAfter: time.Second})
	_, n, err := Register(r.host, stageID, otlpwire.SignalTraces, &stageRecorder{}, true)
	require.ErrorIs(t, err, ErrDivertNotAcknowledged)
	assert.ErrorContains(t, err, "divert_all_pipelines")
	assert.Zero(t, n)
	// A tee stage needs no acknowledgement; an unlisted processor is ignored.
	_, n, err = Register(r.host, stageID, otlpwire.SignalTraces, &stageRecorder{}, false)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	_, n, err = Register(r.host, component.MustNewID("sdpshard"), otlpwire.SignalTraces, &stageRecorder{}, true)
	require.NoError(t, err)
	assert.Zero(t, n)
}

func TestStagesRunInConfiguredOrder(t *testing.T) {
	r := newRig(t, divertConfig())
	var order []component.ID
	stage := func(id component.ID) Stage {
		return StageFunc(func(context.Context, otlpwire.Request) (Result, error) {
			order = append(order, id)
			return Result{}, nil
		})
	}
	// Registered in the reverse order of the configuration.
	register(t, r, stageID, stage(stageID), true)
	register(t, r, countID, stage(countID), false)
	res := r.ext.run(context.Background(), otlpwire.SignalTraces, marshal(t, traces(1, "a")), r.ext.getCall())
	require.NoError(t, res.err)
	assert.Equal(t, []component.ID{countID, stageID}, order)
	assert.Equal(t, []component.ID{countID, stageID}, res.ran.ids)
}

// A diverting stage followed by a counting one: the second sees only what
// the first kept, re-assembled byte for byte from the original resources.
func TestLaterStagesSeeWhatStays(t *testing.T) {
	r := newRig(t, &Config{Stages: []component.ID{stageID, countID}, DivertAllPipelines: true, RetryAfter: time.Second})
	divert := &stageRecorder{divert: true, keep: []int{0, 2}}
	count := &stageRecorder{}
	register(t, r, stageID, divert, true)
	register(t, r, countID, count, false)
	res := r.ext.run(context.Background(), otlpwire.SignalTraces, marshal(t, traces(2, "a", "b", "c")), r.ext.getCall())
	require.NoError(t, res.err)
	want := marshal(t, traces(2, "a", "c"))
	assert.Equal(t, want, res.body)
	require.Len(t, count.seen(), 1)
	assert.Equal(t, want, count.seen()[0])
}

func TestHTTP(t *testing.T) {
	for _, gz := range []bool{false, true} {
		name := "identity"
		if gz {
			name = "gzip"
		}
		t.Run(name+"/divert_all", func(t *testing.T) {
			r := newRig(t, divertConfig())
			s := &stageRecorder{divert: true}
			register(t, r, stageID, s, true)
			r.startReceiver()
			body := marshal(t, traces(3, "a", "b"))
			resp, got := r.post("application/x-protobuf", body, gz)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, "application/x-protobuf", resp.Header.Get("Content-Type"))
			er := ptraceotlp.NewExportResponse()
			require.NoError(t, er.UnmarshalProto(got))
			assert.Zero(t, er.PartialSuccess().RejectedSpans())
			assert.Equal(t, [][]byte{body}, s.seen(), "the stage sees the decompressed request")
			assert.Empty(t, r.seenBatches(), "nothing is left to decode")
			assert.Equal(t, int64(1), r.requestsWith(outcomeDiverted))
		})
		t.Run(name+"/divert_some", func(t *testing.T) {
			r := newRig(t, divertConfig())
			register(t, r, stageID, &stageRecorder{divert: true, keep: []int{1}}, true)
			r.startReceiver()
			resp, _ := r.post("application/x-protobuf; charset=utf-8", marshal(t, traces(3, "a", "b", "c")), gz)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, []seen{{spans: 3, resources: []string{"b"}, ran: true}}, r.seenBatches())
			assert.Equal(t, int64(1), r.requestsWith(outcomePassed))
		})
	}
	t.Run("tee", func(t *testing.T) {
		r := newRig(t, divertConfig())
		s := &stageRecorder{}
		register(t, r, stageID, s, false)
		r.startReceiver()
		resp, _ := r.post("application/x-protobuf", marshal(t, traces(2, "a", "b")), false)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Len(t, s.seen(), 1)
		assert.Equal(t, []seen{{spans: 4, resources: []string{"a", "b"}, ran: true}}, r.seenBatches())
	})
	t.Run("json_passes_through", func(t *testing.T) {
		r := newRig(t, divertConfig())
		s := &stageRecorder{divert: true}
		register(t, r, stageID, s, true)
		r.startReceiver()
		var m ptrace.JSONMarshaler
		body, err := m.MarshalTraces(traces(2, "a", "b"))
		require.NoError(t, err)
		resp, _ := r.post("application/json", body, false)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Empty(t, s.seen())
		assert.Equal(t, []seen{{spans: 4, resources: []string{"a", "b"}, ran: false}}, r.seenBatches())
	})
	t.Run("retryable_refusal", func(t *testing.T) {
		r := newRig(t, divertConfig())
		register(t, r, stageID, &stageRecorder{err: errors.New("queue full")}, true)
		r.startReceiver()
		resp, _ := r.post("application/x-protobuf", marshal(t, traces(1, "a")), true)
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Equal(t, "2", resp.Header.Get("Retry-After"))
		assert.Empty(t, r.seenBatches())
		assert.Equal(t, int64(1), r.requestsWith(outcomeRefusedRetryable))
	})
	t.Run("permanent_refusal", func(t *testing.T) {
		r := newRig(t, divertConfig())
		register(t, r, stageID, &stageRecorder{err: consumererror.NewPermanent(errors.New("too many items"))}, true)
		r.startReceiver()
		resp, _ := r.post("application/x-protobuf", marshal(t, traces(1, "a")), false)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		assert.Empty(t, resp.Header.Get("Retry-After"))
		assert.Equal(t, int64(1), r.requestsWith(outcomeRefusedPermanent))
	})
	t.Run("malformed_left_to_the_receiver", func(t *testing.T) {
		r := newRig(t, divertConfig())
		s := &stageRecorder{divert: true}
		register(t, r, stageID, s, true)
		r.startReceiver()
		resp, _ := r.post("application/x-protobuf", []byte{0x0a, 0x05, 0x01}, false)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		assert.Empty(t, s.seen())
		assert.Equal(t, int64(1), r.requestsWith(outcomeMalformed))
	})
}

func TestGRPC(t *testing.T) {
	for _, gz := range []bool{false, true} {
		var opts []grpc.CallOption
		name := "identity"
		if gz {
			opts, name = append(opts, grpc.UseCompressor("gzip")), "gzip"
		}
		t.Run(name+"/divert_all", func(t *testing.T) {
			r := newRig(t, divertConfig())
			s := &stageRecorder{divert: true}
			register(t, r, stageID, s, true)
			r.startReceiver()
			td := traces(3, "a", "b")
			resp, err := r.grpcClient().Export(context.Background(), ptraceotlp.NewExportRequestFromTraces(td), opts...)
			require.NoError(t, err)
			assert.Zero(t, resp.PartialSuccess().RejectedSpans())
			assert.Equal(t, [][]byte{marshal(t, td)}, s.seen())
			assert.Empty(t, r.seenBatches())
			assert.Equal(t, int64(1), r.requestsWith(outcomeDiverted))
		})
		t.Run(name+"/divert_some", func(t *testing.T) {
			r := newRig(t, divertConfig())
			register(t, r, stageID, &stageRecorder{divert: true, keep: []int{0, 2}}, true)
			r.startReceiver()
			_, err := r.grpcClient().Export(context.Background(), ptraceotlp.NewExportRequestFromTraces(traces(1, "a", "b", "c")), opts...)
			require.NoError(t, err)
			assert.Equal(t, []seen{{spans: 2, resources: []string{"a", "c"}, ran: true}}, r.seenBatches())
		})
	}
	t.Run("tee", func(t *testing.T) {
		r := newRig(t, divertConfig())
		s := &stageRecorder{}
		register(t, r, stageID, s, false)
		r.startReceiver()
		_, err := r.grpcClient().Export(context.Background(), ptraceotlp.NewExportRequestFromTraces(traces(2, "a", "b")))
		require.NoError(t, err)
		assert.Len(t, s.seen(), 1)
		assert.Equal(t, []seen{{spans: 4, resources: []string{"a", "b"}, ran: true}}, r.seenBatches())
	})
	t.Run("no_stage_registered", func(t *testing.T) {
		r := newRig(t, divertConfig())
		r.startReceiver()
		_, err := r.grpcClient().Export(context.Background(), ptraceotlp.NewExportRequestFromTraces(traces(2, "a")))
		require.NoError(t, err)
		assert.Equal(t, []seen{{spans: 2, resources: []string{"a"}, ran: false}}, r.seenBatches())
	})
	t.Run("retryable_refusal", func(t *testing.T) {
		r := newRig(t, divertConfig())
		register(t, r, stageID, &stageRecorder{err: errors.New("queue full")}, true)
		r.startReceiver()
		_, err := r.grpcClient().Export(context.Background(), ptraceotlp.NewExportRequestFromTraces(traces(1, "a")))
		st := status.Convert(err)
		assert.Equal(t, codes.Unavailable, st.Code())
		var info *errdetails.RetryInfo
		for _, d := range st.Details() {
			if ri, ok := d.(*errdetails.RetryInfo); ok {
				info = ri
			}
		}
		require.NotNil(t, info, "RetryInfo")
		assert.Equal(t, 2*time.Second, info.RetryDelay.AsDuration())
		assert.Empty(t, r.seenBatches())
	})
	t.Run("permanent_refusal", func(t *testing.T) {
		r := newRig(t, divertConfig())
		register(t, r, stageID, &stageRecorder{err: consumererror.NewPermanent(errors.New("too many items"))}, true)
		r.startReceiver()
		_, err := r.grpcClient().Export(context.Background(), ptraceotlp.NewExportRequestFromTraces(traces(1, "a")))
		assert.Equal(t, codes.InvalidArgument, status.Code(err))
	})
	t.Run("malformed_left_to_the_receiver", func(t *testing.T) {
		r := newRig(t, divertConfig())
		s := &stageRecorder{divert: true}
		register(t, r, stageID, s, true)
		r.startReceiver()
		conn, err := grpc.NewClient(r.grpcAddr, grpc.WithTransportCredentials(insecureCreds()))
		require.NoError(t, err)
		defer conn.Close()
		// Raw bytes through a codec that sends them as they are.
		err = conn.Invoke(context.Background(), methodTraces, rawMessage{0x0a, 0x05, 0x01}, new(rawMessage), grpc.ForceCodecV2(rawCodec{}))
		assert.Equal(t, codes.Internal, status.Code(err), "gRPC's own answer to an undecodable request: %v", err)
		assert.Empty(t, s.seen())
		assert.Equal(t, int64(1), r.requestsWith(outcomeMalformed))
	})
}
