// SPDX-License-Identifier: Apache-2.0

package wirestageextension

import (
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
)

// rawMessage is a message sent and received as its bytes.
type rawMessage []byte

// rawCodec sends rawMessages verbatim, so that a test can send bytes the
// pdata client would never produce.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.(rawMessage))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*rawMessage) = data.Materialize()
	return nil
}

func insecureCreds() credentials.TransportCredentials { return insecure.NewCredentials() }
