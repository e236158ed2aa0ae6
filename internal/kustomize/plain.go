package kustomize

import (
	"math"
	"time"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/resource"
)

// The two conversions every build makes — kustomize's resources into
// objects, objects into the YAML stream its checksum hashes — are defined
// by round trips: RNode.MarshalJSON (a YAML encode, a YAML decode and a JSON
// encode) then a JSON decode; a JSON encode then sigs.k8s.io/yaml's
// JSONToYAML (a YAML decode and a YAML encode). Together they were a fifth
// of a small build's CPU. The functions below reach the same values
// without the round trips, for the values where the result is known to be
// the same, and report false for any other value, which then takes the
// round trip: the result never differs (TestPlainMatchesRoundTrips).

// objectOf is the object a resource becomes, as toObjects's round trip
// makes it; ok is false when the round trip must decide.
func objectOf(res *resource.Resource) (obj *unstructured.Unstructured, ok bool) {
	m, err := res.Map()
	if err != nil || !jsonDecoded(m) {
		return nil, false
	}
	return &unstructured.Unstructured{Object: m}, true
}

// jsonDecoded rewrites, in place, a map as yaml.v3 decodes a node into the
// value a JSON decode of its JSON encoding gives (utiljson: integers as
// int64): int becomes int64, a float64 that encoding/json writes as an
// integer literal becomes that int64, a time its RFC 3339 text. It reports false for what the round
// trip would change otherwise or refuse: a map with keys that are not
// strings, a string that is not UTF-8 (encoding/json replaces its bytes),
// a float that is not finite, any other type.
func jsonDecoded(m map[string]any) bool {
	for k, v := range m {
		w, ok := jsonValue(v)
		if !ok || !utf8.ValidString(k) {
			return false
		}
		m[k] = w
	}
	return true
}

func jsonValue(v any) (any, bool) {
	switch t := v.(type) {
	case nil, bool, int64:
		return v, true
	case string:
		return v, utf8.ValidString(t)
	case int:
		return int64(t), true
	case float64:
		return jsonNumber(t)
	case time.Time:
		// yaml.v3 decodes an unquoted timestamp as a time; encoding/json
		// writes it in RFC 3339 with nanoseconds, years 0-9999 only.
		if y := t.Year(); y < 0 || y > 9999 {
			return nil, false
		}
		return t.Format(time.RFC3339Nano), true
	case map[string]any:
		return v, t != nil && jsonDecoded(t)
	case []any:
		if t == nil {
			return nil, false
		}
		for i, e := range t {
			w, ok := jsonValue(e)
			if !ok {
				return nil, false
			}
			t[i] = w
		}
		return v, true
	}
	return nil, false
}

// jsonNumber is what a JSON decode into int64-preferring values makes of
// f's encoding: encoding/json writes an integral float below 1e21 in
// magnitude as an integer literal, which decodes as int64 when it fits.
func jsonNumber(f float64) (any, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, false
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		if f >= -(1<<63) && f < 1<<63 {
			return int64(f), true
		}
	}
	return f, true
}

// yamlOf is ToYAML's rendering of one object — JSONToYAML of its JSON
// encoding — made by encoding the object itself: yaml.v2 sorts the keys of
// a map[string]any as it sorts those of the map it decodes, and writes a
// string, a bool, nil and an int64 as it writes the values the decode gives
// back for them. ok is false for anything else: an integral float (which
// the decode would turn into an integer), a string that is not UTF-8, a
// nil map or slice (which JSON writes as null), another type.
func yamlOf(obj map[string]any) ([]byte, bool) {
	if !yamlPlain(obj) {
		return nil, false
	}
	y, err := yamlv2.Marshal(obj)
	return y, err == nil
}

func yamlPlain(v any) bool {
	switch t := v.(type) {
	case nil, bool, int64:
		return true
	case string:
		return utf8.ValidString(t)
	case float64:
		return !math.IsInf(t, 0) && !math.IsNaN(t) && t != math.Trunc(t)
	case map[string]any:
		if t == nil {
			return false
		}
		for k, e := range t {
			if !utf8.ValidString(k) || !yamlPlain(e) {
				return false
			}
		}
		return true
	case []any:
		if t == nil {
			return false
		}
		for _, e := range t {
			if !yamlPlain(e) {
				return false
			}
		}
		return true
	}
	return false
}
