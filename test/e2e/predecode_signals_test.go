// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	grpcgzip "google.golang.org/grpc/encoding/gzip"
)

// sidecarRecords returns the records (Export*ServiceRequest bytes) that
// file-mode sidecars wrote for signal.
func sidecarRecords(dirs []string, signal string) ([][]byte, error) {
	var out [][]byte
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "shard-*-"+signal+".otlp"))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			for len(b) >= 4 {
				n := int(binary.LittleEndian.Uint32(b))
				if len(b) < 4+n {
					break
				}
				out = append(out, b[4:4+n])
				b = b[4+n:]
			}
		}
	}
	return out, nil
}

// logsRequest and metricsRequest build requests of n resources named
// prefix-i, with items items each.
func logsRequest(prefix string, n, items int) plog.Logs {
	ld := plog.NewLogs()
	for r := range n {
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("service.name", fmt.Sprintf("%s-%d", prefix, r))
		sl := rl.ScopeLogs().AppendEmpty()
		for i := range items {
			lr := sl.LogRecords().AppendEmpty()
			lr.Body().SetStr(fmt.Sprintf("%s-%d-log-%d", prefix, r, i))
			lr.SetTimestamp(1)
		}
	}
	return ld
}

func metricsRequest(prefix string, n, items int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	for r := range n {
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr("service.name", fmt.Sprintf("%s-%d", prefix, r))
		m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName(fmt.Sprintf("%s-%d-metric", prefix, r))
		dps := m.SetEmptySum().DataPoints()
		for i := range items {
			dp := dps.AppendEmpty()
			dp.SetIntValue(int64(i))
			dp.SetTimestamp(1)
			dp.Attributes().PutInt("i", int64(i))
		}
	}
	return md
}

// logResources and metricResources key each resource, marshalled alone, by
// service.name; they return the number of resources seen, duplicates
// included.
func logResources(t *testing.T, lds []plog.Logs) (map[string]string, int) {
	out, n := map[string]string{}, 0
	for _, ld := range lds {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			one := plog.NewLogs()
			ld.ResourceLogs().At(i).CopyTo(one.ResourceLogs().AppendEmpty())
			b, err := plogotlp.NewExportRequestFromLogs(one).MarshalProto()
			if err != nil {
				t.Fatal(err)
			}
			v, _ := one.ResourceLogs().At(0).Resource().Attributes().Get("service.name")
			out[v.Str()] = string(b)
			n++
		}
	}
	return out, n
}

func metricResources(t *testing.T, mds []pmetric.Metrics) (map[string]string, int) {
	out, n := map[string]string{}, 0
	for _, md := range mds {
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			one := pmetric.NewMetrics()
			md.ResourceMetrics().At(i).CopyTo(one.ResourceMetrics().AppendEmpty())
			b, err := pmetricotlp.NewExportRequestFromMetrics(one).MarshalProto()
			if err != nil {
				t.Fatal(err)
			}
			v, _ := one.ResourceMetrics().At(0).Resource().Attributes().Get("service.name")
			out[v.Str()] = string(b)
			n++
		}
	}
	return out, n
}

// exportBoth sends a marshalled request over gRPC (with gz: gzip) or HTTP.
func exportBoth(t *testing.T, p *predecode, path string, body []byte, viaGRPC, gz bool, grpcCall func(*grpc.ClientConn, []grpc.CallOption) error) {
	t.Helper()
	if viaGRPC {
		conn, err := grpc.NewClient(p.addrs["divert_grpc"], grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var opts []grpc.CallOption
		if gz {
			opts = append(opts, grpc.UseCompressor(grpcgzip.Name))
		}
		if err := grpcCall(conn, opts); err != nil {
			t.Fatalf("gRPC export: %v", err)
		}
		return
	}
	code, _, err := postOTLP(context.Background(), "http://"+p.addrs["divert_http"]+path, "application/x-protobuf", body, gz)
	if err != nil || code != http.StatusOK {
		t.Fatalf("HTTP export: %d %v", code, err)
	}
}

// divertLogsAndMetrics checks divert for logs and metrics: every resource
// reaches the sidecars once, byte for byte, and the receiver decodes none.
func divertLogsAndMetrics(t *testing.T, p *predecode) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var sentLogs []plog.Logs
	var sentMetrics []pmetric.Metrics
	for i, c := range []struct{ grpc, gz bool }{{true, false}, {true, true}, {false, false}, {false, true}} {
		ld := logsRequest(fmt.Sprintf("dl%d", i), 3, 2+i)
		lreq := plogotlp.NewExportRequestFromLogs(ld)
		lb, _ := lreq.MarshalProto()
		exportBoth(t, p, "/v1/logs", lb, c.grpc, c.gz, func(conn *grpc.ClientConn, opts []grpc.CallOption) error {
			_, err := plogotlp.NewGRPCClient(conn).Export(ctx, lreq, opts...)
			return err
		})
		sentLogs = append(sentLogs, ld)
		md := metricsRequest(fmt.Sprintf("dm%d", i), 3, 2+i)
		mreq := pmetricotlp.NewExportRequestFromMetrics(md)
		mb, _ := mreq.MarshalProto()
		exportBoth(t, p, "/v1/metrics", mb, c.grpc, c.gz, func(conn *grpc.ClientConn, opts []grpc.CallOption) error {
			_, err := pmetricotlp.NewGRPCClient(conn).Export(ctx, mreq, opts...)
			return err
		})
		sentMetrics = append(sentMetrics, md)
	}
	// One JSON request each: the stage does not read JSON, the receiver
	// decodes it and the processors divert it on the pdata path. The
	// receiver's accepted counts must be exactly these.
	jsonLogs, jsonMetrics := logsRequest("dlj", 2, 3), metricsRequest("dmj", 2, 3)
	lj, _ := (&plog.JSONMarshaler{}).MarshalLogs(jsonLogs)
	mj, _ := (&pmetric.JSONMarshaler{}).MarshalMetrics(jsonMetrics)
	for path, body := range map[string][]byte{"/v1/logs": lj, "/v1/metrics": mj} {
		code, _, err := postOTLP(ctx, "http://"+p.addrs["divert_http"]+path, "application/json", body, false)
		if err != nil || code != http.StatusOK {
			t.Fatalf("JSON export to %s: %d %v", path, code, err)
		}
	}
	sentLogs, sentMetrics = append(sentLogs, jsonLogs), append(sentMetrics, jsonMetrics)
	wantLogs, nLogs := logResources(t, sentLogs)
	wantMetrics, nMetrics := metricResources(t, sentMetrics)
	eventually(t, 30*time.Second, func() error {
		lrec, err := sidecarRecords(p.sidecarA, "logs")
		if err != nil {
			return err
		}
		mrec, err := sidecarRecords(p.sidecarA, "metrics")
		if err != nil {
			return err
		}
		if len(lrec) < nLogs || len(mrec) < nMetrics {
			return fmt.Errorf("sidecars have %d logs and %d metrics resources, want %d and %d", len(lrec), len(mrec), nLogs, nMetrics)
		}
		var gotLogs []plog.Logs
		for _, r := range lrec {
			req := plogotlp.NewExportRequest()
			if err := req.UnmarshalProto(r); err != nil {
				return err
			}
			gotLogs = append(gotLogs, req.Logs())
		}
		var gotMetrics []pmetric.Metrics
		for _, r := range mrec {
			req := pmetricotlp.NewExportRequest()
			if err := req.UnmarshalProto(r); err != nil {
				return err
			}
			gotMetrics = append(gotMetrics, req.Metrics())
		}
		gl, gln := logResources(t, gotLogs)
		gm, gmn := metricResources(t, gotMetrics)
		if gln != nLogs || gmn != nMetrics {
			return fmt.Errorf("sidecars received %d logs and %d metrics resources, want each of %d and %d once", gln, gmn, nLogs, nMetrics)
		}
		for k, v := range wantLogs {
			if gl[k] != v {
				return fmt.Errorf("logs resource %s missing or different at the sidecars", k)
			}
		}
		for k, v := range wantMetrics {
			if gm[k] != v {
				return fmt.Errorf("metrics resource %s missing or different at the sidecars", k)
			}
		}
		return nil
	})
	for m, want := range map[string]int{
		"otelcol_receiver_accepted_log_records":   jsonLogs.LogRecordCount(),
		"otelcol_receiver_accepted_metric_points": jsonMetrics.DataPointCount(),
	} {
		if v := p.metric(t, m, `receiver="otlp/divert"`); v != float64(want) {
			t.Errorf("%s{receiver=otlp/divert} = %v, want %d (the JSON request only): the receiver decoded diverted items", m, v, want)
		}
	}
	for _, sig := range []string{"logs", "metrics"} {
		if v := p.metric(t, "otelcol_extension_wirestage_diverted_items", `otelcol_component_id="wirestage/divert"`, `otelcol_signal="`+sig+`"`); v == 0 {
			t.Errorf("wirestage diverted no %s items", sig)
		}
	}
}
