package bucket

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weir-gitops/weir/internal/source/artifact"
)

func TestRevision(t *testing.T) {
	// Expected values are sha256sum/sha512sum of the lines shown, computed
	// outside Go.
	tests := []struct {
		name  string
		index Index
		alg   artifact.Algorithm
		lines string
		want  string
	}{
		{
			name: "empty bucket, Flux's documented revision", index: Index{}, lines: "",
			want: "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		},
		{
			name:  "sorted key etag lines",
			index: Index{"foo": {Key: "foo", ETag: "bar"}, "bar": {Key: "bar", ETag: "baz"}},
			lines: "bar baz\nfoo bar\n",
			want:  "sha256:5da7dfe37b54ea1d5ebffb643d67b09d888635b2fe031763fbb856ea5290fda0",
		},
		{
			name: "byte-wise order: upper case first, '-' before '/'",
			index: Index{
				"a/b.yaml": {Key: "a/b.yaml", ETag: "2"}, "B.yaml": {Key: "B.yaml", ETag: "1"},
				"a-b/x.yaml": {Key: "a-b/x.yaml", ETag: "3"},
			},
			lines: "B.yaml 1\na-b/x.yaml 3\na/b.yaml 2\n",
			want:  "sha256:e3ce3806d85bfa69237822024fe6d121833fb89585ff91bb341254143a7478f1",
		},
		{
			name:  "size does not count",
			index: Index{"deploy/app.yaml": {Key: "deploy/app.yaml", ETag: "0cc175b9c0f1b6a831c399e269772661", Size: 99}},
			lines: "deploy/app.yaml 0cc175b9c0f1b6a831c399e269772661\n",
			want:  "sha256:eea7dbde0c50a654e97eb5ea9c7e2c4c894ab626b44a3ae16c7bffd215bbbb2f",
		},
		{
			name:  "--artifact-digest-algo sha512",
			index: Index{"foo": {Key: "foo", ETag: "bar"}, "bar": {Key: "bar", ETag: "baz"}},
			alg:   artifact.SHA512, lines: "bar baz\nfoo bar\n",
			want: "sha512:f92332b1841deffd026e4db7385bac500a45c010cee961618e8bfebeec06535ab3422150b9011ca08909d51722b36d24a13f147306311164e3ef5d8a7ac2fc88",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if _, err := tt.index.WriteTo(&b); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.lines, b.String()); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			got, err := tt.index.Revision(tt.alg)
			if err != nil || got != tt.want {
				t.Errorf("Revision = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
	if _, err := (Index{}).Revision("blake3"); err == nil {
		t.Error("blake3 accepted")
	}
}

func TestRevisionChangesWithAnyObject(t *testing.T) {
	base := Index{"a": {Key: "a", ETag: "1"}, "b": {Key: "b", ETag: "2"}}
	rev := func(ix Index) string {
		r, _ := ix.Revision("")
		return r
	}
	same := Index{"b": {Key: "b", ETag: "2"}, "a": {Key: "a", ETag: "1"}}
	if rev(base) != rev(same) {
		t.Error("same objects, different revision")
	}
	for name, ix := range map[string]Index{
		"etag changed":  {"a": {Key: "a", ETag: "1"}, "b": {Key: "b", ETag: "3"}},
		"object added":  {"a": {Key: "a", ETag: "1"}, "b": {Key: "b", ETag: "2"}, "c": {Key: "c", ETag: "4"}},
		"object gone":   {"a": {Key: "a", ETag: "1"}},
		"object rename": {"a": {Key: "a", ETag: "1"}, "bb": {Key: "bb", ETag: "2"}},
	} {
		if rev(ix) == rev(base) {
			t.Errorf("%s: revision unchanged", name)
		}
	}
}

func TestNewIndex(t *testing.T) {
	objects := []Object{
		{Key: ".sourceignore", ETag: "s"},
		{Key: "apps/", ETag: "d"},
		{Key: "apps/app.yaml", ETag: "1", Size: 10},
		{Key: "apps/logo.png", ETag: "2"},
		{Key: "apps/README.md", ETag: "3"},
		{Key: "sub/.sourceignore", ETag: "4"},
		{Key: ".git/config", ETag: "5"},
	}
	tests := []struct {
		name    string
		rules   []artifact.IgnoreRules
		want    []string
		wantErr string
	}{
		{
			name: "default exclusions without custom rules",
			want: []string{"apps/README.md", "apps/app.yaml", "sub/.sourceignore"},
		},
		{
			name:  "custom rules drop the defaults but not the VCS ones",
			rules: []artifact.IgnoreRules{{Text: "*.md\n"}},
			want:  []string{"apps/app.yaml", "apps/logo.png", "sub/.sourceignore"},
		},
		{
			name:  "spec.ignore after .sourceignore re-includes",
			rules: []artifact.IgnoreRules{{Text: "apps/\n"}, {Text: "!apps/app.yaml\n"}},
			want:  []string{"apps/app.yaml", "sub/.sourceignore"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix, err := NewIndex("b", objects, artifact.NewFilterFromRules(tt.rules...))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ix.Keys()); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}

	hostile := append([]Object{{Key: "ok.yaml"}}, Object{Key: "../evil.yaml"})
	_, err := NewIndex("b", hostile, artifact.NewFilterFromRules())
	if !errors.Is(err, ErrUnsafeKey) || !strings.Contains(err.Error(), "'../evil.yaml'") || !strings.Contains(err.Error(), "'b'") {
		t.Errorf("unsafe key: %v", err)
	}
	// An unsafe key the rules exclude is never downloaded, so it is no error.
	ix, err := NewIndex("b", hostile, artifact.NewFilterFromRules(artifact.IgnoreRules{Text: "evil.yaml\n"}))
	if err != nil || len(ix) != 1 {
		t.Errorf("excluded unsafe key: %v, %v", ix, err)
	}
}
