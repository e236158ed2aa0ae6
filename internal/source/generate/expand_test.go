package generate

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
)

func TestExpand(t *testing.T) {
	mono := Sources{"mono": filepath.Join("testdata", "mono")}
	spec := &sourceextensionsv1beta1.ArtifactGeneratorSpec{
		Sources:     []sourceextensionsv1beta1.SourceReference{{Alias: "mono", Kind: "GitRepository", Name: "mono"}},
		PathPattern: "@mono/apps/base/{app}",
		OutputArtifacts: []sourceextensionsv1beta1.OutputArtifact{{
			Name:           "{app}-base",
			OriginRevision: "@mono",
			Copy:           []sourceextensionsv1beta1.CopyOperation{{From: "@mono/apps/base/{app}/**", To: "@artifact/{app}/"}},
		}},
	}
	got, err := Expand(spec, mono)
	if err != nil {
		t.Fatal(err)
	}
	want := []Artifact{
		{Name: "podinfo-base", Labels: map[string]string{"app": "podinfo"}, Dir: "apps/base/podinfo", Spec: sourceextensionsv1beta1.OutputArtifact{
			Name: "podinfo-base", OriginRevision: "@mono",
			Copy: []sourceextensionsv1beta1.CopyOperation{{From: "@mono/apps/base/podinfo/**", To: "@artifact/podinfo/"}},
		}},
		{Name: "redis-base", Labels: map[string]string{"app": "redis"}, Dir: "apps/base/redis", Spec: sourceextensionsv1beta1.OutputArtifact{
			Name: "redis-base", OriginRevision: "@mono",
			Copy: []sourceextensionsv1beta1.CopyOperation{{From: "@mono/apps/base/redis/**", To: "@artifact/redis/"}},
		}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Expand (-want +got):\n%s", d)
	}

	// Without pathPattern the artifacts are the spec's.
	spec.PathPattern = ""
	spec.OutputArtifacts = []sourceextensionsv1beta1.OutputArtifact{{Name: "infra", Copy: []sourceextensionsv1beta1.CopyOperation{{From: "@mono/infrastructure/**", To: "@artifact/"}}}}
	got, err = Expand(spec, mono)
	if err != nil || len(got) != 1 || got[0].Name != "infra" || got[0].Labels != nil {
		t.Errorf("Expand without pathPattern = %+v, %v", got, err)
	}
}

func TestExpandTwoCaptures(t *testing.T) {
	src := t.TempDir()
	for _, d := range []string{"apps/Web/envs/prod", "apps/Web/envs/dev", "apps/api/envs/prod", "apps/api/other"} {
		if err := os.MkdirAll(filepath.Join(src, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	spec := &sourceextensionsv1beta1.ArtifactGeneratorSpec{
		PathPattern: "@repo/apps/{app}/envs/{env}",
		OutputArtifacts: []sourceextensionsv1beta1.OutputArtifact{{
			Name: "{app}-{env}", Copy: []sourceextensionsv1beta1.CopyOperation{{From: "@repo/apps/{app}/envs/{env}/**", To: "@artifact/"}},
		}},
	}
	got, err := Expand(spec, Sources{"repo": src})
	if err != nil {
		t.Fatal(err)
	}
	var names, froms []string
	for _, a := range got {
		names = append(names, a.Name+" "+a.Labels["app"]+"/"+a.Labels["env"])
		froms = append(froms, a.Spec.Copy[0].From)
	}
	// Names and labels are lower-cased, copy paths keep the directory's case.
	if !sameSet(names, []string{"web-dev web/dev", "web-prod web/prod", "api-prod api/prod"}) {
		t.Errorf("names %v", names)
	}
	if !sameSet(froms, []string{"@repo/apps/Web/envs/dev/**", "@repo/apps/Web/envs/prod/**", "@repo/apps/api/envs/prod/**"}) {
		t.Errorf("froms %v", froms)
	}
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

func TestExpandRefuses(t *testing.T) {
	src := t.TempDir()
	for _, d := range []string{"apps/Web", "apps/web", "apps/bad_name"} {
		if err := os.MkdirAll(filepath.Join(src, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, pattern, artifact, only, message string
	}{
		{"case collision", "@repo/apps/{app}", "{app}", "Web web", `both resolve to artifact name "web"`},
		{"name not an object name", "@repo/apps/{app}", "{app}", "bad_name", `rendered artifact name "bad_name" is not a valid Kubernetes object name`},
		{"unknown alias", "@nope/apps/{app}", "{app}", "", "source alias nope not found"},
		{"duplicate capture", "@repo/{a}/{a}", "{a}", "", `duplicate capture variable "a"`},
		{"unclosed capture", "@repo/apps/{app", "x", "", "missing closing brace"},
		{"undefined placeholder", "@repo/apps/{app}", "{other}", "web", `capture variable "other" is not defined by pathPattern`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := src
			if tt.only != "" {
				dir = t.TempDir()
				for _, d := range strings.Fields(tt.only) {
					if err := os.MkdirAll(filepath.Join(dir, "apps", d), 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			spec := &sourceextensionsv1beta1.ArtifactGeneratorSpec{
				PathPattern:     tt.pattern,
				OutputArtifacts: []sourceextensionsv1beta1.OutputArtifact{{Name: tt.artifact, Copy: []sourceextensionsv1beta1.CopyOperation{{From: "@repo/x", To: "@artifact/"}}}},
			}
			_, err := Expand(spec, Sources{"repo": dir})
			if err == nil || !strings.Contains(err.Error(), tt.message) || !errors.Is(err, ErrInvalidSpec) {
				t.Errorf("error %v, want an ErrInvalidSpec containing %q", err, tt.message)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	src := []sourceextensionsv1beta1.SourceReference{{Alias: "a"}, {Alias: "b"}}
	ops := []sourceextensionsv1beta1.CopyOperation{{From: "@a/x", To: "@artifact/"}}
	tests := []struct {
		name    string
		spec    sourceextensionsv1beta1.ArtifactGeneratorSpec
		message string
	}{
		{"valid", sourceextensionsv1beta1.ArtifactGeneratorSpec{Sources: src, OutputArtifacts: []sourceextensionsv1beta1.OutputArtifact{{Name: "x", Revision: "@b", Copy: ops}}}, ""},
		{"duplicate alias", sourceextensionsv1beta1.ArtifactGeneratorSpec{Sources: append(src, sourceextensionsv1beta1.SourceReference{Alias: "a"})}, "duplicate source alias 'a' found"},
		{"duplicate name", sourceextensionsv1beta1.ArtifactGeneratorSpec{Sources: src, OutputArtifacts: []sourceextensionsv1beta1.OutputArtifact{{Name: "x", Copy: ops}, {Name: "x", Copy: ops}}}, "duplicate artifact name 'x' found"},
		{"revision alias", sourceextensionsv1beta1.ArtifactGeneratorSpec{Sources: src, OutputArtifacts: []sourceextensionsv1beta1.OutputArtifact{{Name: "x", Revision: "@c", Copy: ops}}}, "artifact x revision source alias 'c' not found"},
		{"copy alias", sourceextensionsv1beta1.ArtifactGeneratorSpec{Sources: src, OutputArtifacts: []sourceextensionsv1beta1.OutputArtifact{{Name: "x", Copy: []sourceextensionsv1beta1.CopyOperation{{From: "@z/x", To: "@artifact/"}}}}}, "source alias 'z' not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(&tt.spec)
			switch {
			case tt.message == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tt.message != "" && (err == nil || !strings.Contains(err.Error(), tt.message)):
				t.Errorf("Validate: %v, want %q", err, tt.message)
			}
		})
	}
}
