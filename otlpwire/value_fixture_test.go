// SPDX-License-Identifier: Apache-2.0

package otlpwire

import "testing"

// kvlistValue is an AnyValue holding {"b": [1, "x"], "a": bytes("")}.
var kvlistValue = []byte{
	0x32, 0x1b, // kvlist_value, 27 bytes
	0x0a, 0x10, 0x0a, 0x01, 'b', 0x12, 0x0b, // values: {key "b", value (11 bytes):
	0x2a, 0x09, 0x0a, 0x02, 0x18, 0x01, 0x0a, 0x03, 0x0a, 0x01, 'x', // array [int 1, "x"]}
	0x0a, 0x07, 0x0a, 0x01, 'a', 0x12, 0x02, 0x3a, 0x00, // values: {key "a", value bytes ""}
}

func TestKVListFixtureText(t *testing.T) {
	v, err := NewValue(kvlistValue)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := v.Text(nil); err != nil || string(got) != `{"a":null,"b":[1,"x"]}` {
		t.Fatalf("Text = %s, %v", got, err)
	}
}
