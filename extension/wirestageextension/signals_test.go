// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/otelcol-sdp/otelcol-sdp/otlpwire"
)

func logs(names ...string) plog.Logs {
	ld := plog.NewLogs()
	for _, n := range names {
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("service.name", n)
		rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr(n)
	}
	return ld
}

func metrics(names ...string) pmetric.Metrics {
	md := pmetric.NewMetrics()
	for _, n := range names {
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr("service.name", n)
		m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName(n)
		m.SetEmptyGauge().DataPoints().AppendEmpty().SetIntValue(1)
	}
	return md
}

// TestMetricsAndLogs runs the stage on metrics and logs requests over both
// protocols: the stage sees the request bytes and the receiver decodes only
// what the stage kept (the second resource).
func TestMetricsAndLogs(t *testing.T) {
	for _, protocol := range []string{"grpc", "http"} {
		t.Run("logs/"+protocol, func(t *testing.T) {
			r := newRig(t, divertConfig())
			s := &stageRecorder{divert: true, keep: []int{1}}
			unregister, _, err := Register(r.host, stageID, otlpwire.SignalLogs, s, true)
			require.NoError(t, err)
			defer unregister()
			sink := new(consumertest.LogsSink)
			f, set, cfg := r.receiverConfig()
			recv, err := f.CreateLogs(context.Background(), set, cfg, sink)
			require.NoError(t, err)
			require.NoError(t, recv.Start(context.Background(), r.host))
			defer func() { require.NoError(t, recv.Shutdown(context.Background())) }()

			req := plogotlp.NewExportRequestFromLogs(logs("a", "b", "c"))
			body, err := req.MarshalProto()
			require.NoError(t, err)
			if protocol == "grpc" {
				_, err = plogotlp.NewGRPCClient(dial(t, r.grpcAddr)).Export(context.Background(), req)
				require.NoError(t, err)
			} else {
				resp, _ := r.postTo("/v1/logs", body)
				require.Equal(t, http.StatusOK, resp.StatusCode)
			}
			assert.Equal(t, [][]byte{body}, s.seen())
			require.Len(t, sink.AllLogs(), 1)
			assert.Equal(t, logs("b"), sink.AllLogs()[0])
		})
		t.Run("metrics/"+protocol, func(t *testing.T) {
			r := newRig(t, divertConfig())
			s := &stageRecorder{divert: true, keep: []int{1}}
			unregister, _, err := Register(r.host, stageID, otlpwire.SignalMetrics, s, true)
			require.NoError(t, err)
			defer unregister()
			sink := new(consumertest.MetricsSink)
			f, set, cfg := r.receiverConfig()
			recv, err := f.CreateMetrics(context.Background(), set, cfg, sink)
			require.NoError(t, err)
			require.NoError(t, recv.Start(context.Background(), r.host))
			defer func() { require.NoError(t, recv.Shutdown(context.Background())) }()

			req := pmetricotlp.NewExportRequestFromMetrics(metrics("a", "b", "c"))
			body, err := req.MarshalProto()
			require.NoError(t, err)
			if protocol == "grpc" {
				_, err = pmetricotlp.NewGRPCClient(dial(t, r.grpcAddr)).Export(context.Background(), req)
				require.NoError(t, err)
			} else {
				resp, _ := r.postTo("/v1/metrics", body)
				require.Equal(t, http.StatusOK, resp.StatusCode)
			}
			assert.Equal(t, [][]byte{body}, s.seen())
			require.Len(t, sink.AllMetrics(), 1)
			assert.Equal(t, metrics("b"), sink.AllMetrics()[0])
		})
	}
}

// A stage registered for one signal does not run on the others.
func TestStageRunsOnlyForItsSignal(t *testing.T) {
	r := newRig(t, divertConfig())
	s := &stageRecorder{divert: true}
	unregister, _, err := Register(r.host, stageID, otlpwire.SignalLogs, s, true)
	require.NoError(t, err)
	defer unregister()
	r.startReceiver()
	_, err = r.grpcClient().Export(context.Background(), ptraceotlp.NewExportRequestFromTraces(traces(1, "a")))
	require.NoError(t, err)
	assert.Empty(t, s.seen())
	assert.Equal(t, []seen{{spans: 1, resources: []string{"a"}}}, r.seenBatches())
}

func dial(t *testing.T, addr string) *grpc.ClientConn {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}
