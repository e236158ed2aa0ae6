package kustomize

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/yaml"
)

// plainCases are values the direct conversions of plain.go must render as
// the round trips do, or leave to them.
var plainCases = map[string]string{
	"configmap": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {app: x}\ndata:\n  k: v\n",
	"numbers": `apiVersion: v1
kind: X
metadata: {name: n}
spec:
  int: 5
  negative: -7
  zero: 0
  float: 1.5
  integralFloat: 1.0
  million: 1000000.0
  big: 9223372036854775807
  beyondInt64: 9223372036854775808
  beyondUint64: 18446744073709551616
  huge: 1e21
  hugeInt: 100000000000000000000000
  small: 1.5e-7
  negativeZero: -0.0
  octalish: 010
  hex: 0x1F
  exponent: 1e3
`,
	"strings": `apiVersion: v1
kind: X
metadata: {name: s}
spec:
  yesString: "yes"
  trueString: "true"
  num: "12"
  float: "1.5"
  empty: ""
  nullString: "null"
  tilde: "~"
  merge: "<<"
  colon: "a: b"
  dash: "- x"
  unicode: "héllo 世界 😀"
  separators: "a\u2028b\u2029c"
  html: "<a href=\"x\">&amp;</a>"
  control: "tab\there\nnewline"
  long: "` + longWords + `"
  timestamp: 2001-12-14t21:59:43.10-05:00
  date: 2002-12-14
  multiline: |
    line one
    line two
`,
	"shapes": `apiVersion: v1
kind: X
metadata:
  name: shapes
  annotations: {}
spec:
  emptyList: []
  emptyMap: {}
  nothing: null
  tilde: ~
  nested: [[1, 2], [], {a: [b, {c: d}]}]
  "1": numeric key
  "true": bool key
  base: &base {x: 1, y: 2}
  merged:
    <<: *base
    y: 3
  alias: *base
`,
	"boolKeys": "apiVersion: v1\nkind: X\nmetadata: {name: k}\nspec:\n  true: a\n  yes: b\n  1: c\n",
	"binary": `apiVersion: v1
kind: Secret
metadata: {name: b}
data:
  raw: !!binary aGVsbG8=
  bad: !!binary /w==
`,
	"tags": `apiVersion: v1
kind: X
metadata: {name: t}
spec:
  str: !!str 123
  int: !!int "42"
  float: !!float 3
  bool: !!bool "true"
  stamp: !!timestamp 2001-12-14
`,
}

const longWords = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud exercitation"

// TestPlainMatchesRoundTrips holds objectOf and yamlOf to the round trips
// they stand in for, on every case: where they answer, the answer is the
// round trip's, byte for byte.
func TestPlainMatchesRoundTrips(t *testing.T) {
	rf := provider.NewDefaultDepProvider().GetResourceFactory()
	for name, doc := range plainCases {
		t.Run(name, func(t *testing.T) {
			resources, err := rf.SliceFromBytes([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			for _, res := range resources {
				data, err := res.MarshalJSON()
				if err != nil {
					if _, ok := objectOf(res); ok {
						t.Errorf("the round trip fails (%v), objectOf does not", err)
					}
					continue
				}
				want, err := objectFromJSON(data)
				if err != nil {
					t.Fatal(err)
				}
				if got, ok := objectOf(res); ok {
					if diff := cmp.Diff(want.Object, got.Object); diff != "" {
						t.Errorf("objectOf differs from the JSON round trip (-want +got):\n%s", diff)
					}
				}
				checkYAML(t, want.Object)
			}
		})
	}
}

// checkYAML holds yamlOf to JSONToYAML of the JSON encoding, for obj and
// for obj with values the decode never gives (an integral float, a nil
// map), which yamlOf must leave to the round trip.
func checkYAML(t *testing.T, obj map[string]any) {
	t.Helper()
	variants := []map[string]any{obj,
		withValue(obj, 2.0), withValue(obj, 1e6), withValue(obj, map[string]any(nil)), withValue(obj, []any(nil)),
		withValue(obj, "\xff"), withValue(obj, 0.25), withValue(obj, 1e300), withValue(obj, []any{int64(1), 2.5, "x"}),
	}
	for _, v := range variants {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want, err := yaml.JSONToYAML(j)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := yamlOf(v); ok && string(got) != string(want) {
			t.Errorf("yamlOf differs from JSONToYAML:\n%s", cmp.Diff(string(want), string(got)))
		}
		got, err := ToYAML([]*unstructured.Unstructured{{Object: v}})
		if err != nil || string(got) != string(want) {
			t.Errorf("ToYAML = %q, %v; want %q", got, err, want)
		}
	}
}

func withValue(obj map[string]any, v any) map[string]any {
	c := make(map[string]any, len(obj)+1)
	for k, e := range obj {
		c[k] = e
	}
	c["extra"] = v
	return c
}

// TestPlainTakesTheCommonPath: the direct conversions must answer for
// what builds are made of, or they save nothing.
func TestPlainTakesTheCommonPath(t *testing.T) {
	rf := provider.NewDefaultDepProvider().GetResourceFactory()
	for _, name := range []string{"configmap", "strings", "shapes"} {
		resources, err := rf.SliceFromBytes([]byte(plainCases[name]))
		if err != nil {
			t.Fatal(err)
		}
		obj, ok := objectOf(resources[0])
		if !ok {
			t.Errorf("%s: objectOf left it to the round trip", name)
			continue
		}
		if _, ok := yamlOf(obj.Object); !ok {
			t.Errorf("%s: yamlOf left it to the round trip", name)
		}
	}
}
