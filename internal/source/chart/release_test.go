package chart

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
)

func TestWithDigest(t *testing.T) {
	for in, want := range map[[2]string]string{
		{"1.2.3", "sha256:0123456789abcdef"}:        "1.2.3+0123456789ab",
		{"1.2.3+old", "sha256:0123456789abcdef"}:    "1.2.3+0123456789ab",
		{"1.2.3", "nodigest"}:                       "1.2.3",
		{"1.2.3-rc.1", "sha512:fedcba9876543210ff"}: "1.2.3-rc.1+fedcba987654",
	} {
		if got := WithDigest(in[0], in[1]); got != want {
			t.Errorf("WithDigest(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
}

func TestOCIDigest(t *testing.T) {
	if got := OCIDigest(&meta.Artifact{Revision: "1.0.0@sha256:abc", Digest: "sha256:def"}); got != "sha256:abc" {
		t.Errorf("with a digest in the revision: %q", got)
	}
	if got := OCIDigest(&meta.Artifact{Revision: "1.0.0", Digest: "sha256:def"}); got != "sha256:def" {
		t.Errorf("without: %q", got)
	}
}

func TestSourceOf(t *testing.T) {
	hr := func(spec helmv2.HelmReleaseSpec) *helmv2.HelmRelease {
		return &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web"}, Spec: spec}
	}
	tpl := func(ns string) *helmv2.HelmChartTemplate {
		return &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{Chart: "web",
			SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "HelmRepository", Name: "charts", Namespace: ns}}}
	}
	type want struct {
		Kind string
		Key  types.NamespacedName
		OK   bool
	}
	tests := []struct {
		name string
		obj  *helmv2.HelmRelease
		want want
	}{
		{"chart template", hr(helmv2.HelmReleaseSpec{Chart: tpl("")}), want{"HelmChart", types.NamespacedName{Namespace: "apps", Name: "apps-web"}, true}},
		{"template from another namespace", hr(helmv2.HelmReleaseSpec{Chart: tpl("flux-system")}),
			want{"HelmChart", types.NamespacedName{Namespace: "flux-system", Name: "apps-web"}, true}},
		{"chartRef", hr(helmv2.HelmReleaseSpec{ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "web"}}),
			want{"OCIRepository", types.NamespacedName{Namespace: "apps", Name: "web"}, true}},
		{"neither", hr(helmv2.HelmReleaseSpec{}), want{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, key, ok := SourceOf(tt.obj)
			if diff := cmp.Diff(tt.want, want{kind, key, ok}); diff != "" {
				t.Errorf("SourceOf (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoadArtifact loads a packaged chart (one directory) and a chart
// directory tarball (Chart.yaml at the top); refuses an artifact with no
// chart, naming paths relative to it; passes a fetch error through.
func TestLoadArtifact(t *testing.T) {
	ctx := context.Background()
	files := func(layout map[string]string) Fetch {
		return func(_ context.Context, _ *meta.Artifact, dir string) error {
			writeFiles(t, dir, layout)
			return nil
		}
	}
	for name, layout := range map[string]map[string]string{
		"packaged":  {"web/Chart.yaml": chartYAML("web", "1.1.0"), "web/templates/cm.yaml": "kind: ConfigMap\n"},
		"directory": {"Chart.yaml": chartYAML("web", "1.1.0"), "templates/cm.yaml": "kind: ConfigMap\n"},
	} {
		chrt, err := LoadArtifact(ctx, files(layout), &meta.Artifact{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if chrt.Name() != "web" || chrt.Metadata.Version != "1.1.0" || len(chrt.Templates) != 1 {
			t.Errorf("%s: loaded %s-%s with %d templates", name, chrt.Name(), chrt.Metadata.Version, len(chrt.Templates))
		}
	}
	_, err := LoadArtifact(ctx, files(map[string]string{"README.md": "x"}), &meta.Artifact{})
	if !errors.Is(err, ErrNotLoadable) || !strings.Contains(err.Error(), "no Chart.yaml in the artifact") {
		t.Errorf("no chart: %v", err)
	}
	_, err = LoadArtifact(ctx, files(map[string]string{"Chart.yaml": "name: [", "templates/a.yaml": ""}), &meta.Artifact{})
	if !errors.Is(err, ErrNotLoadable) || strings.Contains(err.Error(), "helmrelease-") {
		t.Errorf("a broken Chart.yaml: %v (want ErrNotLoadable, no scratch path)", err)
	}
	gone := errors.New("artifact not found")
	if _, err := LoadArtifact(ctx, func(context.Context, *meta.Artifact, string) error { return gone }, &meta.Artifact{}); !errors.Is(err, gone) {
		t.Errorf("fetch error: %v", err)
	}
}
