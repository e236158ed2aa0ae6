package crd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.APIServerOnly) }

// TestExamplesAgainstAPIServer creates every example object in a real
// kube-apiserver that serves weir's CRDs. valid-*.yaml must be accepted and
// read back without any field pruned; invalid-*.yaml must be rejected with
// an error containing the text of its "# reject:" line.
func TestExamplesAgainstAPIServer(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	dirs, err := filepath.Glob("testdata/examples/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 15 {
		t.Errorf("found examples for %d kinds, want 15", len(dirs))
	}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var valid, invalid int
		for _, file := range files {
			name := filepath.Base(dir) + "/" + filepath.Base(file)
			switch {
			case strings.HasPrefix(filepath.Base(file), "valid-"):
				valid++
				t.Run(name, func(t *testing.T) { assertAccepted(t, env.Client, ns, file) })
			case strings.HasPrefix(filepath.Base(file), "invalid-"):
				invalid++
				t.Run(name, func(t *testing.T) { assertRejected(t, env.Client, ns, file) })
			default:
				t.Errorf("%s: example files must start with valid- or invalid-", name)
			}
		}
		if valid == 0 || invalid == 0 {
			t.Errorf("%s: %d valid and %d invalid examples, want at least one of each", dir, valid, invalid)
		}
	}
}

func assertAccepted(t *testing.T, c client.Client, ns, file string) {
	obj, _ := readExample(t, file)
	obj.SetNamespace(ns)
	sent := obj.DeepCopy()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("rejected: %v", err)
	}
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(obj.GroupVersionKind())
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), got); err != nil {
		t.Fatal(err)
	}
	if missing := missingFields(sent.Object["spec"], got.Object["spec"], "spec"); len(missing) > 0 {
		t.Errorf("the API server pruned fields the example sets: %s", strings.Join(missing, ", "))
	}
}

func assertRejected(t *testing.T, c client.Client, ns, file string) {
	obj, want := readExample(t, file)
	if want == "" {
		t.Fatal(`invalid example has no "# reject: <text>" first line`)
	}
	obj.SetNamespace(ns)
	err := c.Create(context.Background(), obj)
	if err == nil {
		t.Fatalf("accepted, want an error containing %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
}

func readExample(t *testing.T, file string) (*unstructured.Unstructured, string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var reject string
	if first, _, _ := bytes.Cut(data, []byte("\n")); bytes.HasPrefix(first, []byte("# reject:")) {
		reject = strings.TrimSpace(strings.TrimPrefix(string(first), "# reject:"))
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		t.Fatalf("parsing %s: %v", file, err)
	}
	return obj, reject
}

// missingFields lists the paths present in sent but absent (or different)
// in got. Values the server added (defaults) are not reported.
func missingFields(sent, got any, path string) []string {
	switch s := sent.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{path}
		}
		var out []string
		for k, v := range s {
			gv, ok := g[k]
			if !ok {
				out = append(out, path+"."+k)
				continue
			}
			out = append(out, missingFields(v, gv, path+"."+k)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(s) {
			return []string{path}
		}
		var out []string
		for i := range s {
			out = append(out, missingFields(s[i], g[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	default:
		if !reflect.DeepEqual(normalize(sent), normalize(got)) {
			return []string{path}
		}
		return nil
	}
}

// normalize makes numbers comparable after a JSON round trip.
func normalize(v any) any {
	data, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(data, &out)
	return out
}
