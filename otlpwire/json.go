package otlpwire

// appendJSON renders an array or kvlist value as JSON.
func appendJSON(dst []byte, v Value) []byte {
	out, ok := appendJSONValue(dst, v, 0)
	if !ok {
		return dst
	}
	return out
}

func appendJSONValue(dst []byte, v Value, depth int) ([]byte, bool) {
	return dst, false
}
