package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/cli/clitest"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.APIServerOnly) }

// The harness lives in clitest, shared with the end-to-end tests; these
// short names keep the tests readable.
type (
	result     = clitest.Result
	syncBuffer = clitest.Buffer
)

var now = clitest.Now

func weir(t *testing.T, args ...string) result { t.Helper(); return clitest.Run(t, args...) }

// weirIO runs weir with stdin, writing its output to stdout (which may be nil).
func weirIO(ctx context.Context, t *testing.T, stdin string, stdout *syncBuffer, args ...string) result {
	t.Helper()
	return clitest.RunIO(ctx, t, stdin, stdout, nil, args...)
}

func assertGolden(t *testing.T, name, got string, namespaces ...string) {
	t.Helper()
	clitest.AssertGolden(t, name, got, namespaces...)
}

func waitFor(t *testing.T, b *syncBuffer, text string) { t.Helper(); clitest.WaitFor(t, b, text) }

// applyFixture creates the objects of testdata/<file> in ns (the file's
// namespaces NS and NS2 become ns and ns2), then writes the status each
// document carries through the status subresource, as a controller would.
func applyFixture(t *testing.T, file string, ns string, ns2 ...string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if len(ns2) > 0 {
		text = strings.ReplaceAll(text, "NS2", ns2[0])
	}
	text = strings.ReplaceAll(text, "NS", ns)
	return applyYAML(t, text)
}

func applyYAML(t *testing.T, text string) []*unstructured.Unstructured {
	t.Helper()
	env := testenv.Get(t)
	ctx := context.Background()
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatal(err)
		}
		if len(u.Object) == 0 {
			continue
		}
		status, hasStatus := u.Object["status"]
		if err := env.Client.Create(ctx, u); err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		if hasStatus {
			writeStatus(t, u, status.(map[string]any))
		}
		objs = append(objs, u)
	}
	return objs
}

// writeStatus replaces u's status, with observedGeneration (when the status
// gives -1 or none) set to the object's generation, as a controller that
// has caught up would write it.
func writeStatus(t *testing.T, u *unstructured.Unstructured, status map[string]any) {
	t.Helper()
	env := testenv.Get(t)
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
			return false, err.Error()
		}
		s := deepCopyMap(status)
		if g, ok := s["observedGeneration"]; !ok || g == int64(-1) || g == float64(-1) {
			s["observedGeneration"] = u.GetGeneration()
		}
		if conds, ok := s["conditions"].([]any); ok {
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok {
					if _, set := m["observedGeneration"]; !set {
						m["observedGeneration"] = u.GetGeneration()
					}
				}
			}
		}
		u.Object["status"] = s
		if err := env.Client.Status().Update(ctx, u); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

func deepCopyMap(m map[string]any) map[string]any {
	return runtimeDeepCopy(m).(map[string]any)
}

func runtimeDeepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = runtimeDeepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = runtimeDeepCopy(e)
		}
		return out
	default:
		return v
	}
}

func keyOf(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

// goldenCase is one run of weir in a table test: its arguments (the
// namespace flag is added), expected exit code and golden file.
type goldenCase struct {
	name   string
	args   []string
	golden string
	code   int
}

// runGoldenCases runs each case in ns as a subtest, in order, comparing
// its exit code and output with the case's golden file.
func runGoldenCases(t *testing.T, ns string, cases []goldenCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := weir(t, append(c.args, "-n", ns)...)
			if res.Code != c.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", res.Code, c.code, res.Stderr)
			}
			assertGolden(t, c.golden, "stdout:\n"+res.Stdout+"stderr:\n"+res.Stderr, ns)
		})
	}
}
