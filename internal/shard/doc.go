// Package shard maps routing keys to shards and turns OTLP requests into the
// per-shard SDP frames that carry them.
//
// Jump is the consistent hash every sharding component of the module uses, so
// that a resource lands on the same shard whichever component routes it.
// Router is the wire stage of the sdpshard processor: it works on the bytes
// of an OTLP export request, never on pdata, so that a path that sees the raw
// request before the receiver decodes it can call it unchanged.
package shard
