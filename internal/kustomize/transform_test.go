package kustomize

import (
	"strings"
	"testing"

	"github.com/weir-gitops/weir/api/meta"
)

func TestTransform(t *testing.T) {
	const in = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: nginx:1\n"
	for _, tc := range []struct {
		name    string
		patches []meta.Patch
		images  []meta.Image
		want    []string // in this order
		err     string
	}{
		{name: "nothing to do keeps the stream", want: []string{in}},
		{name: "json6902 on the target only", patches: []meta.Patch{{
			Patch: "- op: add\n  path: /data\n  value: {k: v}\n", Target: &meta.Selector{Kind: "ConfigMap"},
		}}, want: []string{"k: v", "kind: ConfigMap", "kind: Deployment"}},
		{name: "strategic merge and images keep the order", patches: []meta.Patch{{
			Patch: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\n  labels: {team: web}\n",
		}}, images: []meta.Image{{Name: "nginx", NewTag: "2"}}, want: []string{"name: b", "team: web", "image: nginx:2"}},
		{name: "a patch that does not apply", patches: []meta.Patch{{
			Patch: "- op: replace\n  path: /data/none\n  value: x\n", Target: &meta.Selector{Kind: "ConfigMap"},
		}}, err: "kustomize build failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Transform([]byte(in), tc.patches, tc.images)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rest := string(out)
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks %q after the earlier parts:\n%s", w, out)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}
