package v2

import (
	"bytes"
	"encoding/json"
)

// Values is a free-form JSON document, stored as the raw bytes the API
// server sent. weir keeps its own type, rather than apiextensions' JSON,
// so that api/ imports nothing beyond apimachinery.
type Values struct {
	// Raw is the JSON encoding of the values.
	Raw []byte `json:"-"`
}

// MarshalJSON writes Raw verbatim, or null when empty.
func (in Values) MarshalJSON() ([]byte, error) {
	if len(in.Raw) == 0 {
		return []byte("null"), nil
	}
	return in.Raw, nil
}

// UnmarshalJSON keeps a copy of data; null leaves Raw empty.
func (in *Values) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		in.Raw = nil
		return nil
	}
	in.Raw = append(in.Raw[:0], data...)
	return nil
}

// AsMap decodes the values into a map; nil when empty.
func (in *Values) AsMap() (map[string]any, error) {
	if in == nil || len(in.Raw) == 0 {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(in.Raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}
