// SPDX-License-Identifier: Apache-2.0

//go:build race

package sdpshardprocessor

// raceEnabled reports a -race build, whose sync.Pool drops a quarter of
// what is put into it on purpose.
const raceEnabled = true
