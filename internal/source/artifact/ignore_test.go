package artifact

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr(s string) *string { return &s }

// everyDefault holds one file for each kind of default exclusion, plus two
// files nothing excludes by default.
var everyDefault = []node{
	file("app.yaml", "a"),
	file("docs/guide.md", "g"),
	file(".git/config", "c"),
	file(".git/objects/ab/cdef", "o"),
	file(".gitignore", "i"),
	file(".gitmodules", "m"),
	file(".gitattributes", "t"),
	file("logo.png", "p"),
	file("img/photo.JPG.jpg", "j"),
	file("a/b/c.jpeg", "j"),
	file("anim.gif", "g"),
	file("movie.wmv", "w"),
	file("movie.flv", "f"),
	file("bundle.tar.gz", "z"),
	file("deep/dir/bundle.zip", "z"),
	file(".github/workflows/ci.yaml", "ci"),
	file(".circleci/config.yml", "ci"),
	file(".travis.yml", "ci"),
	file(".gitlab-ci.yml", "ci"),
	file("appveyor.yml", "ci"),
	file(".drone.yml", "ci"),
	file("cloudbuild.yaml", "ci"),
	file("codeship-services.yml", "ci"),
	file("codeship-steps.yml", "ci"),
	file("sub/.goreleaser.yml", "r"),
	file(".sops.yaml", "s"),
	file("clusters/prod/.sops.yaml", "s"),
	file("legacy/.flux.yaml", "f"),
}

func TestNewFilter(t *testing.T) {
	tests := []struct {
		name string
		tree []node
		spec *string
		want []string // regular files archived
	}{
		{
			name: "defaults",
			tree: everyDefault,
			want: []string{"app.yaml", "docs/guide.md"},
		},
		{
			name: "a .sourceignore replaces the non-VCS defaults",
			tree: append([]node{file(".sourceignore", "# docs are not deployed\n*.md\n")}, everyDefault...),
			want: []string{
				".circleci/config.yml", ".drone.yml", ".github/workflows/ci.yaml", ".gitlab-ci.yml", ".sops.yaml",
				".sourceignore", ".travis.yml", "a/b/c.jpeg", "anim.gif", "app.yaml", "appveyor.yml", "bundle.tar.gz",
				"cloudbuild.yaml", "clusters/prod/.sops.yaml", "codeship-services.yml", "codeship-steps.yml",
				"deep/dir/bundle.zip", "img/photo.JPG.jpg", "legacy/.flux.yaml", "logo.png", "movie.flv", "movie.wmv",
				"sub/.goreleaser.yml",
			},
		},
		{
			name: "a comment-only .sourceignore keeps the defaults",
			tree: append([]node{file(".sourceignore", "# nothing\n\n   \n")}, everyDefault...),
			want: []string{".sourceignore", "app.yaml", "docs/guide.md"},
		},
		{
			name: "nested .sourceignore applies to its directory and below",
			tree: []node{
				file("top.txt", "t"),
				file("sub/.sourceignore", "*.txt\n/anchored.yaml\n"),
				file("sub/a.txt", "a"),
				file("sub/deeper/b.txt", "b"),
				file("sub/anchored.yaml", "x"),
				file("sub/deeper/anchored.yaml", "kept: anchored to sub/"),
				file("other/c.txt", "c"),
			},
			want: []string{"other/c.txt", "sub/.sourceignore", "sub/deeper/anchored.yaml", "top.txt"},
		},
		{
			name: "child .sourceignore overrides its parent",
			tree: []node{
				file(".sourceignore", "*.yaml\n"),
				file("a.yaml", "a"),
				file("keep/.sourceignore", "!important.yaml\n"),
				file("keep/important.yaml", "i"),
				file("keep/other.yaml", "o"),
			},
			want: []string{".sourceignore", "keep/.sourceignore", "keep/important.yaml"},
		},
		{
			name: "spec.ignore re-includes what .sourceignore excluded",
			tree: []node{
				file(".sourceignore", "*.txt\n"),
				file("drop.txt", "d"),
				file("keep.txt", "k"),
			},
			spec: ptr("!keep.txt\n"),
			want: []string{".sourceignore", "keep.txt"},
		},
		{
			name: "spec.ignore example from Flux's documentation",
			tree: []node{
				file("README.md", "r"),
				file("src/main.go", "m"),
				file("deploy/app.yaml", "a"),
				file("deploy/base/notes.md", "n"),
				file("deploy/base/svc.yaml", "s"),
				file("deploy/overlays/prod/todo.txt", "t"),
				file("deploy/overlays/prod/patch.yaml", "p"),
			},
			spec: ptr("# exclude all\n/*\n# include deploy dir\n!/deploy\n# exclude file extensions from deploy dir\n/deploy/**/*.md\n/deploy/**/*.txt\n"),
			want: []string{"deploy/app.yaml", "deploy/base/svc.yaml", "deploy/overlays/prod/patch.yaml"},
		},
		{
			name: "re-include beneath an excluded directory, as Flux does",
			tree: []node{
				file("conf/keep.yaml", "k"),
				file("conf/drop.yaml", "d"),
				file("clusters/prod/app.yaml", "p"),
				file("clusters/dev/app.yaml", "d"),
			},
			spec: ptr("/*\n!/clusters/prod/\n!conf/keep.yaml\n"),
			want: []string{"clusters/prod/app.yaml", "conf/keep.yaml"},
		},
		{
			name: "spec.ignore replaces the non-VCS defaults and may re-include a VCS file",
			tree: everyDefault,
			spec: ptr("/docs/\n!.gitignore\n"),
			want: []string{
				".circleci/config.yml", ".drone.yml", ".github/workflows/ci.yaml", ".gitignore", ".gitlab-ci.yml",
				".sops.yaml", ".travis.yml", "a/b/c.jpeg", "anim.gif", "app.yaml", "appveyor.yml", "bundle.tar.gz",
				"cloudbuild.yaml", "clusters/prod/.sops.yaml", "codeship-services.yml", "codeship-steps.yml",
				"deep/dir/bundle.zip", "img/photo.JPG.jpg", "legacy/.flux.yaml", "logo.png", "movie.flv", "movie.wmv",
				"sub/.goreleaser.yml",
			},
		},
		{
			name: "empty spec.ignore keeps the defaults",
			tree: everyDefault,
			spec: ptr(""),
			want: []string{"app.yaml", "docs/guide.md"},
		},
		{
			name: "CRLF rules",
			tree: []node{file(".sourceignore", "*.md\r\n/tmp/\r\n"), file("a.md", "a"), file("tmp/x", "x"), file("b.yaml", "b")},
			want: []string{".sourceignore", "b.yaml"},
		},
		{
			name: ".sourceignore inside .git is not read",
			tree: []node{file(".git/.sourceignore", "*.yaml\n"), file("a.yaml", "a")},
			want: []string{"a.yaml"},
		},
		{
			name: ".sourceignore in a linked directory applies under the link",
			tree: []node{
				file("lib/.sourceignore", "*.md\n"),
				file("lib/README.md", "r"),
				file("lib/Chart.yaml", "c"),
				symlink("charts/lib", "../lib"),
			},
			want: []string{"charts/lib/.sourceignore", "charts/lib/Chart.yaml", "lib/.sourceignore", "lib/Chart.yaml"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tt.tree...)
			f, err := NewFilter(root, tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := archiveBytes(t, root, ArchiveOptions{Filter: f})
			if diff := cmp.Diff(tt.want, fileNames(readArchive(t, data))); diff != "" {
				t.Errorf("archived files (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewFilterDirectoryEntries(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, file("conf/keep.yaml", "k"), file("conf/drop.yaml", "d"), file(".github/ci.yaml", "c"), dir("empty"))
	f, err := NewFilter(root, ptr("conf/\n!conf/keep.yaml\n"))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := archiveBytes(t, root, ArchiveOptions{Filter: f})
	// The excluded directory has no entry of its own; its re-included file
	// does. With spec.ignore set, .github/ is no longer a default exclusion.
	want := []string{".github/", ".github/ci.yaml", "conf/keep.yaml", "empty/"}
	if diff := cmp.Diff(want, names(readArchive(t, data))); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
}

func TestNewFilterUnreadableSources(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	writeTree(t, base, file("outside/rules", "*.yaml\n"))
	writeTree(t, root, file("a.yaml", "a"), symlink(".sourceignore", "../outside/rules"))
	f, err := NewFilter(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Exclude("a.yaml", false) {
		t.Error("rules were read through a link leading out of the tree")
	}

	big := t.TempDir()
	if err := os.WriteFile(filepath.Join(big, ".sourceignore"), make([]byte, maxIgnoreFileSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewFilter(big, nil); err == nil {
		t.Error("an oversized .sourceignore was accepted")
	}
	if _, err := NewFilter(t.TempDir(), ptr(string(make([]byte, maxIgnoreFileSize+1)))); err == nil {
		t.Error("an oversized spec.ignore was accepted")
	}
}

func TestIgnoreFilterExclude(t *testing.T) {
	f := NewFilterFromRules(
		IgnoreRules{Dir: "apps", Text: "*.tmp\n/local/\n"},
		IgnoreRules{Text: "secret*\n!secret.example\nbuild/\n"},
	)
	tests := []struct {
		path  string
		isDir bool
		want  bool
	}{
		{"", true, false},
		{".git", true, true},
		{".git/HEAD", false, true},
		{".git", false, false}, // a submodule's gitfile is not the .git/ directory
		{"logo.png", false, false},
		{"apps/x.tmp", false, true},
		{"x.tmp", false, false},
		{"apps/local", true, true},
		{"apps/local/f", false, true},
		{"apps/sub/local", true, false},
		{"secret.yaml", false, true},
		{"deep/secret.yaml", false, true},
		{"secret.example", false, false},
		{"build", true, true},
		{"build", false, false},
		{"a/build/out", false, true},
	}
	for _, tt := range tests {
		if got := f.Exclude(tt.path, tt.isDir); got != tt.want {
			t.Errorf("Exclude(%q, %v) = %v, want %v", tt.path, tt.isDir, got, tt.want)
		}
	}
	if f.prunesExcludedDirs() {
		t.Error("a filter with ! rules must not prune excluded directories")
	}
	if !NewFilterFromRules().prunesExcludedDirs() {
		t.Error("the default filter should prune excluded directories")
	}
}
