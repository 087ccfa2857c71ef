// SPDX-License-Identifier: Apache-2.0

// Package wirediff tests otlpwire against pdata: differential tests (counts,
// attributes, hashes, splits and every item view compared with what pdata
// decodes from the same bytes), fuzz targets with pdata as the oracle,
// allocation-free benchmarks side by side with pdata, and the generator of
// otlpwire's testdata/requests.bin. They live in the root module because
// otlpwire's own module depends on nothing; the package has no code of its
// own.
package wirediff
