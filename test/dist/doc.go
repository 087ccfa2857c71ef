// SPDX-License-Identifier: Apache-2.0

// Package dist checks how the distribution is built, shipped and deployed:
// the committed ocb output equals what ocb generates from
// builder-config.yaml, the Dockerfile builds the same binaries as the
// Makefile, every module is on one Collector train (train_test.go), and the
// minimal ocb manifest in examples/ builds a working Collector of one's own
// from this module.
//
// The Helm tests (helm_*_test.go) render deploy/helm's values files with
// real helm and the official opentelemetry-collector chart named by
// OTELCOL_SDP_HELM_CHART, never with a model of it: lint --strict in every
// chart mode and for the fleet, the Pod Security Standards evaluated by
// Kubernetes' own policy code on every rendered pod, the rendered Collector
// configuration validated by the built otelcol-sdp, the rendered sidecars
// started by the built sdp-sidecar, and the wiring (sockets and volumes,
// images, RBAC, Secrets) read from the rendered objects. Without the chart
// they skip and `make test` prints that they did not run.
//
// docs_test.go holds docs/configuration.md to the components' Config
// structs and default configurations and to the flags the built
// sdp-sidecar takes.
//
// The tests need the e2e build tag and the binaries and tools `make test`
// builds and installs.
package dist
