// SPDX-License-Identifier: Apache-2.0

// Package dist checks how the distribution is built and shipped: the
// committed ocb output equals what ocb generates from builder-config.yaml,
// the Dockerfile builds the same binaries as the Makefile, the Helm values'
// Collector configuration validates against the built binary, the pod the
// values render (through a model of the chart's templates, helm_chart_test.go)
// passes the restricted Pod Security Standard in every chart mode and runs the
// distribution's image tag, every module is on one Collector train
// (train_test.go), and the minimal ocb manifest in examples/ builds a working
// Collector of one's own from this module.
//
// The tests need the e2e build tag and the binaries and tools `make test`
// builds and installs.
package dist
