package ssa_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/internal/apply/ssa"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

func diffSet(ns, greeting, password string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: %[1]s
data:
  greeting: %[2]s
  color: blue
---
apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: %[1]s
stringData:
  password: %[3]s
  user: admin
`, ns, greeting, password)
}

// TestDiff dry-runs objects against what the cluster holds: absent ones
// are created, applied ones unchanged, and a hand edit shows as a unified
// diff, with Secret values masked and ignored paths left out.
func TestDiff(t *testing.T) {
	ctx := context.Background()
	env := testenv.Get(t)
	ns := env.Namespace(t)
	m, _ := newManager(t)
	diff := func(o *unstructured.Unstructured, ignore ...string) *ssa.ObjectDiff {
		t.Helper()
		d, err := m.Diff(ctx, o, ssa.DiffOptions{IgnorePaths: ignore, DesiredName: "local"})
		if err != nil {
			t.Fatalf("Diff %s: %v", o.GetName(), err)
		}
		return d
	}
	objs := objects(t, diffSet(ns, "hello", "s3cr3t-one"))
	for _, o := range objs {
		if d := diff(o); d.Action != ssa.DiffCreated || d.Diff != "" {
			t.Errorf("%s before apply: %+v", o.GetName(), d)
		}
	}
	if _, err := m.Apply(ctx, objs, ssa.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if d := diff(o); d.Action != ssa.DiffUnchanged || d.Diff != "" || len(d.Patch) != 0 {
			t.Errorf("%s after apply: %+v", o.GetName(), d)
		}
	}

	edited := objects(t, diffSet(ns, "bonjour", "s3cr3t-two"))
	d := diff(edited[0])
	want := fmt.Sprintf("--- ConfigMap/%[1]s/settings (cluster)\n+++ ConfigMap/%[1]s/settings (local)\n", ns)
	if d.Action != ssa.DiffChanged || !strings.HasPrefix(d.Diff, want) ||
		!strings.Contains(d.Diff, "-  greeting: hello\n+  greeting: bonjour") {
		t.Errorf("ConfigMap diff: %s\n%s", d.Action, d.Diff)
	}
	if a, c, r := d.Counts(); a != 0 || c != 1 || r != 0 {
		t.Errorf("counts = %d %d %d, want one change", a, c, r)
	}
	if d := diff(edited[0], "/data/greeting"); d.Action != ssa.DiffUnchanged {
		t.Errorf("ignored path still differs:\n%s", d.Diff)
	}

	d = diff(edited[1])
	if d.Action != ssa.DiffChanged || strings.Contains(d.Diff, "s3cr3t") || strings.Contains(d.Diff, "YWRtaW4") ||
		!strings.Contains(d.Diff, "password: '***** (before)'") || !strings.Contains(d.Diff, "password: '***** (after)'") ||
		!strings.Contains(d.Diff, "user: '*****'") {
		t.Errorf("Secret diff not masked as expected:\n%s", d.Diff)
	}

	// Neither the namespace nor the kind exists: both would be created.
	missing := objects(t, diffSet("no-such-namespace", "x", "y"))[0]
	if d := diff(missing); d.Action != ssa.DiffCreated {
		t.Errorf("object in a missing namespace: %s", d.Action)
	}
	crd := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Nothing",
		"metadata": map[string]any{"name": "x", "namespace": ns}}}
	if d := diff(crd); d.Action != ssa.DiffCreated {
		t.Errorf("object of an unknown kind: %s", d.Action)
	}
	// An absent object the server would refuse: an error, unless only
	// its absence matters.
	invalid := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "invalid", "namespace": ns}, "data": map[string]any{"not a key!": "x"}}}
	if _, err := m.Diff(ctx, invalid, ssa.DiffOptions{}); err == nil || !strings.Contains(err.Error(), "dry-run failed") {
		t.Errorf("invalid object: %v", err)
	}
	if d, err := m.Diff(ctx, invalid, ssa.DiffOptions{AbsentWithoutDryRun: true}); err != nil || d.Action != ssa.DiffCreated || d.Live != nil {
		t.Errorf("invalid absent object with AbsentWithoutDryRun: %+v, %v", d, err)
	}
	// Diff changes nothing.
	cm := get(t, "v1", "ConfigMap", ns, "settings")
	if v, _, _ := unstructured.NestedString(cm.Object, "data", "greeting"); v != "hello" {
		t.Errorf("Diff wrote to the cluster: greeting %q", v)
	}
}

// TestCompareManifests compares two renders of an object offline: the
// action, the diff's headers, and Secret values masked on either side.
func TestCompareManifests(t *testing.T) {
	base := objects(t, diffSet("apps", "hello", "s3cr3t-one"))
	head := objects(t, diffSet("apps", "bonjour", "s3cr3t-two"))
	for _, tc := range []struct {
		name          string
		before, after *unstructured.Unstructured
		action        ssa.DiffAction
		contains      []string
	}{
		{"unchanged", base[0], base[0].DeepCopy(), ssa.DiffUnchanged, nil},
		{"changed", base[0], head[0], ssa.DiffChanged, []string{
			"--- ConfigMap/apps/settings (base)\n+++ ConfigMap/apps/settings (head)\n",
			"-  greeting: hello\n+  greeting: bonjour",
		}},
		{"created", nil, head[0], ssa.DiffCreated, []string{"+kind: ConfigMap\n", "+  greeting: bonjour"}},
		{"deleted", base[0], nil, ssa.DiffDeleted, []string{"-kind: ConfigMap\n", "-  greeting: hello"}},
		{"secret changed", base[1], head[1], ssa.DiffChanged, []string{
			"-  password: '***** (before)'\n+  password: '***** (after)'", "   user: '*****'",
		}},
		{"secret created", nil, head[1], ssa.DiffCreated, []string{"+  password: '***** (after)'"}},
		{"secret deleted", base[1], nil, ssa.DiffDeleted, []string{"-  password: '***** (before)'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ssa.CompareManifests(tc.before, tc.after, "base", "head")
			if err != nil {
				t.Fatal(err)
			}
			if d.Action != tc.action {
				t.Errorf("action %s, want %s", d.Action, tc.action)
			}
			if tc.action == ssa.DiffUnchanged && d.Diff != "" {
				t.Errorf("unchanged object with a diff:\n%s", d.Diff)
			}
			for _, s := range tc.contains {
				if !strings.Contains(d.Diff, s) {
					t.Errorf("diff lacks %q:\n%s", s, d.Diff)
				}
			}
			if strings.Contains(d.Diff, "s3cr3t") || strings.Contains(d.Diff, "admin") {
				t.Errorf("a Secret value shows:\n%s", d.Diff)
			}
		})
	}
	if _, err := ssa.CompareManifests(nil, nil, "base", "head"); err == nil {
		t.Error("two absent sides compared without an error")
	}
}
