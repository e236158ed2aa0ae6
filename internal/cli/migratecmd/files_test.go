package migratecmd

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestDetectAndApply(t *testing.T) {
	latest := map[schema.GroupKind]string{
		{Group: "source.toolkit.fluxcd.io", Kind: "GitRepository"}: "v1",
		{Group: "helm.toolkit.fluxcd.io", Kind: "HelmRelease"}:     "v2",
	}
	cases := []struct {
		name string
		in   string
		want []Upgrade
		out  string
	}{
		{
			name: "kind after",
			in:   "apiVersion: source.toolkit.fluxcd.io/v1beta2\nkind: GitRepository\n",
			want: []Upgrade{{Line: 0, Kind: "GitRepository", Group: "source.toolkit.fluxcd.io", From: "v1beta2", To: "v1"}},
			out:  "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\n",
		},
		{
			name: "kind before, metadata between",
			in:   "kind: HelmRelease\nmetadata:\n  name: x\napiVersion: 'helm.toolkit.fluxcd.io/v2beta2' # old\n",
			want: []Upgrade{{Line: 3, Kind: "HelmRelease", Group: "helm.toolkit.fluxcd.io", From: "v2beta2", To: "v2"}},
			out:  "kind: HelmRelease\nmetadata:\n  name: x\napiVersion: 'helm.toolkit.fluxcd.io/v2' # old\n",
		},
		{
			name: "kind of the next document is not this one's",
			in:   "apiVersion: source.toolkit.fluxcd.io/v1beta2\n---\nkind: GitRepository\n",
			out:  "apiVersion: source.toolkit.fluxcd.io/v1beta2\n---\nkind: GitRepository\n",
		},
		{
			name: "kind of a nested mapping is not this one's",
			in:   "apiVersion: source.toolkit.fluxcd.io/v1beta2\nspec:\n  kind: GitRepository\n",
			out:  "apiVersion: source.toolkit.fluxcd.io/v1beta2\nspec:\n  kind: GitRepository\n",
		},
		{
			name: "list items keep apart",
			in:   "items:\n- apiVersion: helm.toolkit.fluxcd.io/v2beta1\n  kind: HelmRelease\n- apiVersion: source.toolkit.fluxcd.io/v1\n  kind: GitRepository\n",
			want: []Upgrade{{Line: 1, Kind: "HelmRelease", Group: "helm.toolkit.fluxcd.io", From: "v2beta1", To: "v2"}},
			out:  "items:\n- apiVersion: helm.toolkit.fluxcd.io/v2\n  kind: HelmRelease\n- apiVersion: source.toolkit.fluxcd.io/v1\n  kind: GitRepository\n",
		},
		{
			name: "unknown kind of a Flux group, core kinds",
			in:   "apiVersion: source.toolkit.fluxcd.io/v1beta2\nkind: Thing\n---\napiVersion: v1\nkind: ConfigMap\n",
			out:  "apiVersion: source.toolkit.fluxcd.io/v1beta2\nkind: Thing\n---\napiVersion: v1\nkind: ConfigMap\n",
		},
		{
			name: "a value that reads like the key",
			in:   "apiVersion: v1\nkind: ConfigMap\ndata:\n  x: \"apiVersion: helm.toolkit.fluxcd.io/v2beta1\"\n",
			out:  "apiVersion: v1\nkind: ConfigMap\ndata:\n  x: \"apiVersion: helm.toolkit.fluxcd.io/v2beta1\"\n",
		},
		{
			name: "CRLF",
			in:   "apiVersion: helm.toolkit.fluxcd.io/v2beta1\r\nkind: HelmRelease\r\n",
			want: []Upgrade{{Line: 0, Kind: "HelmRelease", Group: "helm.toolkit.fluxcd.io", From: "v2beta1", To: "v2"}},
			out:  "apiVersion: helm.toolkit.fluxcd.io/v2\r\nkind: HelmRelease\r\n",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Detect([]byte(c.in), latest)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Detect (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.out, string(Apply([]byte(c.in), got))); diff != "" {
				t.Errorf("Apply (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLatestVersions(t *testing.T) {
	latest, err := latestVersions("")
	if err != nil {
		t.Fatal(err)
	}
	for gk, want := range map[schema.GroupKind]string{
		{Group: "source.toolkit.fluxcd.io", Kind: "GitRepository"}:        "v1",
		{Group: "helm.toolkit.fluxcd.io", Kind: "HelmRelease"}:            "v2",
		{Group: "notification.toolkit.fluxcd.io", Kind: "Alert"}:          "v1beta3",
		{Group: "notification.toolkit.fluxcd.io", Kind: "Provider"}:       "v1beta3",
		{Group: "notification.toolkit.fluxcd.io", Kind: "Receiver"}:       "v1",
		{Group: "image.toolkit.fluxcd.io", Kind: "ImagePolicy"}:           "v1",
		{Group: "source.extensions.fluxcd.io", Kind: "ArtifactGenerator"}: "v1beta1",
	} {
		if latest[gk] != want {
			t.Errorf("%s: %q, want %q", gk, latest[gk], want)
		}
	}
	if _, err := latestVersions("2.5"); err == nil {
		t.Error("version 2.5 accepted")
	}
}

// FuzzDetect checks on any input that Detect never panics and that Apply
// changes the detected lines only, each into a line naming the new version.
func FuzzDetect(f *testing.F) {
	f.Add("apiVersion: helm.toolkit.fluxcd.io/v2beta1\nkind: HelmRelease\n")
	f.Add("- kind: HelmRelease\n  apiVersion: \"helm.toolkit.fluxcd.io/v2beta2\" # x\n---\n")
	latest := map[schema.GroupKind]string{{Group: "helm.toolkit.fluxcd.io", Kind: "HelmRelease"}: "v2"}
	f.Fuzz(func(t *testing.T, in string) {
		ups := Detect([]byte(in), latest)
		out := strings.Split(string(Apply([]byte(in), ups)), "\n")
		orig := strings.Split(in, "\n")
		if len(out) != len(orig) {
			t.Fatalf("%d lines became %d", len(orig), len(out))
		}
		changed := map[int]bool{}
		for _, u := range ups {
			changed[u.Line] = true
			if !strings.Contains(out[u.Line], "helm.toolkit.fluxcd.io/v2") {
				t.Errorf("line %d %q does not name the new version", u.Line, out[u.Line])
			}
		}
		for i := range orig {
			if !changed[i] && out[i] != orig[i] {
				t.Errorf("line %d changed: %q -> %q", i, orig[i], out[i])
			}
		}
	})
}
