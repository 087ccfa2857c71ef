// SPDX-License-Identifier: Apache-2.0

// Package shard maps routing keys to shards and turns OTLP requests into the
// per-shard SDP frames that carry them.
//
// Jump is the consistent hash every sharding component of the module uses, so
// that a resource lands on the same shard whichever component routes it.
// Members is the step from a resource's routing key to the consumer that
// owns it: Jump over the indexes of a fixed endpoints list, or rendezvous
// hashing over the stable IDs of a fleet that changes, so that one member
// joining or leaving anywhere moves only about 1/N of the resources.
// Router is the wire stage of the sdpshard processor: it works on the bytes
// of an OTLP export request, never on pdata, so that a path that sees the raw
// request before the receiver decodes it can call it unchanged.
package shard
