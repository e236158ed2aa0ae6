package generate

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

func cp(from, to string, opts ...func(*sourceextensionsv1beta1.CopyOperation)) sourceextensionsv1beta1.CopyOperation {
	op := sourceextensionsv1beta1.CopyOperation{From: from, To: to}
	for _, o := range opts {
		o(&op)
	}
	return op
}

func strategy(s string) func(*sourceextensionsv1beta1.CopyOperation) {
	return func(op *sourceextensionsv1beta1.CopyOperation) { op.Strategy = s }
}

func exclude(p ...string) func(*sourceextensionsv1beta1.CopyOperation) {
	return func(op *sourceextensionsv1beta1.CopyOperation) { op.Exclude = p }
}

// renderTree lists a tree as text: each file's path, mode and content, each
// directory's path with a trailing slash, in walk order.
func renderTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			fmt.Fprintf(&b, "%s/\n", rel)
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v\n%s", rel, fi.Mode().Perm(), indent(string(data)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func indent(s string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if line != "" {
			b.WriteString("  | " + line)
		}
	}
	if !strings.HasSuffix(s, "\n") && s != "" {
		b.WriteString("\n")
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name+".txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Errorf("tree differs from %s:\n--- got\n%s--- want\n%s", p, got, want)
	}
}

func TestBuildGolden(t *testing.T) {
	mono := Sources{"mono": filepath.Join("testdata", "mono")}
	tests := []struct {
		name string
		ops  []sourceextensionsv1beta1.CopyOperation
	}{
		{"recursive-contents-to-root", []sourceextensionsv1beta1.CopyOperation{cp("@mono/infrastructure/**", "@artifact/")}},
		{"flux-example-staging", []sourceextensionsv1beta1.CopyOperation{
			cp("@mono/apps/base/**", "@artifact/base/"),
			cp("@mono/apps/staging/**", "@artifact/staging/"),
		}},
		{"file-renamed", []sourceextensionsv1beta1.CopyOperation{cp("@mono/values/prod.yaml", "@artifact/config/app.yaml")}},
		{"file-into-dir", []sourceextensionsv1beta1.CopyOperation{cp("@mono/values/prod.yaml", "@artifact/config/")}},
		{"file-into-existing-dir", []sourceextensionsv1beta1.CopyOperation{
			cp("@mono/apps/staging/", "@artifact/"),
			cp("@mono/values/prod.yaml", "@artifact/staging"),
		}},
		{"dir-as-subdir", []sourceextensionsv1beta1.CopyOperation{cp("@mono/apps/base/", "@artifact/x/")}},
		{"whole-source-root", []sourceextensionsv1beta1.CopyOperation{cp("@mono/", "@artifact/")}},
		{"star-keeps-path", []sourceextensionsv1beta1.CopyOperation{cp("@mono/apps/*/kustomization.yaml", "@artifact/out/")}},
		{"star-matches-dirs", []sourceextensionsv1beta1.CopyOperation{cp("@mono/infrastructure/*", "@artifact/")}},
		{"doublestar-recursive", []sourceextensionsv1beta1.CopyOperation{cp("@mono/apps/**/release.yaml", "@artifact/")}},
		{"exclude", []sourceextensionsv1beta1.CopyOperation{cp("@mono/apps/**", "@artifact/", exclude("*.md", "staging/**", "production"))}},
		{"exclude-source-path", []sourceextensionsv1beta1.CopyOperation{cp("@mono/apps/base/", "@artifact/", exclude("apps/base/redis/**", "**/*.md"))}},
		{"executable-bit", []sourceextensionsv1beta1.CopyOperation{cp("@mono/values/*", "@artifact/")}},
		{"overwrite-later-wins", []sourceextensionsv1beta1.CopyOperation{
			cp("@mono/charts/podinfo/", "@artifact/"),
			cp("@mono/values/prod.yaml", "@artifact/podinfo/values.yaml"),
		}},
		{"merge-values", []sourceextensionsv1beta1.CopyOperation{
			cp("@mono/charts/podinfo/", "@artifact/"),
			cp("@mono/values/prod.yaml", "@artifact/podinfo/values.yaml", strategy(sourceextensionsv1beta1.MergeStrategy)),
		}},
		{"merge-without-destination-copies", []sourceextensionsv1beta1.CopyOperation{
			cp("@mono/values/prod.yaml", "@artifact/values.yaml", strategy(sourceextensionsv1beta1.MergeStrategy)),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := t.TempDir()
			stats, err := Build(context.Background(), tt.ops, mono, dst, Options{})
			if err != nil {
				t.Fatal(err)
			}
			tree := renderTree(t, dst)
			for _, o := range stats.Overwrites {
				tree += fmt.Sprintf("overwritten: %s (%s, then %s)\n", o.Path, o.First, o.Then)
			}
			golden(t, tt.name, tree)
		})
	}
}

// writeTarball writes a .tar.gz holding files (name → content).
func writeTarball(t *testing.T, p string, files map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(files[name])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[name])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBuildExtract(t *testing.T) {
	src := t.TempDir()
	writeTarball(t, filepath.Join(src, "podinfo-6.7.0.tgz"), map[string]string{
		"podinfo/Chart.yaml": "name: podinfo\n", "podinfo/values.yaml": "replicaCount: 1\n",
	})
	writeTarball(t, filepath.Join(src, "releases/a/redis.tar.gz"), map[string]string{"redis/Chart.yaml": "name: redis\n"})
	if err := os.WriteFile(filepath.Join(src, "releases/notes.txt"), []byte("skipped\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sources := Sources{"oci": src}
	tests := []struct {
		name string
		ops  []sourceextensionsv1beta1.CopyOperation
	}{
		{"extract-single", []sourceextensionsv1beta1.CopyOperation{cp("@oci/podinfo-6.7.0.tgz", "@artifact/", strategy(sourceextensionsv1beta1.ExtractStrategy))}},
		{"extract-glob-skips-others", []sourceextensionsv1beta1.CopyOperation{cp("@oci/releases/**", "@artifact/charts/", strategy(sourceextensionsv1beta1.ExtractStrategy))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := t.TempDir()
			if _, err := Build(context.Background(), tt.ops, sources, dst, Options{}); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, renderTree(t, dst))
		})
	}
}

// hostile builds a source with what a malicious repository may hold.
func hostile(t *testing.T) string {
	t.Helper()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("stolen\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	for _, d := range []string{"deploy", "links", "bomb", "dir"} {
		if err := os.MkdirAll(filepath.Join(src, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(src, "deploy/app.yaml"), []byte("kind: A\n"), 0o644))
	must(os.WriteFile(filepath.Join(src, "list.yaml"), []byte("- a\n"), 0o644))
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(src, "links/abs")))
	must(os.Symlink("../../"+filepath.Base(outside)+"/secret", filepath.Join(src, "links/rel")))
	must(os.Symlink("../deploy", filepath.Join(src, "links/dir")))
	must(os.Symlink("../deploy/app.yaml", filepath.Join(src, "links/ok.yaml")))
	// 4 MiB of zeros compress to a few KiB.
	writeTarball(t, filepath.Join(src, "bomb/bomb.tgz"), map[string]string{"zeros": strings.Repeat("\x00", 4<<20)})
	return src
}

func TestBuildRefuses(t *testing.T) {
	src := hostile(t)
	sources := Sources{"src": src}
	tests := []struct {
		name    string
		ops     []sourceextensionsv1beta1.CopyOperation
		opts    Options
		is      error
		message string
	}{
		{name: "dotdot in to", ops: []sourceextensionsv1beta1.CopyOperation{cp("@src/deploy/**", "@artifact/../../etc/")},
			is: ErrInvalidSpec, message: "destination path must not contain '..'"},
		{name: "unknown alias", ops: []sourceextensionsv1beta1.CopyOperation{cp("@nope/**", "@artifact/")},
			is: ErrInvalidSpec, message: "source alias 'nope' not found"},
		{name: "dotdot in from", ops: []sourceextensionsv1beta1.CopyOperation{cp("@src/../x", "@artifact/")},
			is: ErrInvalidSpec, message: "must not contain '..'"},
		{name: "bad strategy", ops: []sourceextensionsv1beta1.CopyOperation{cp("@src/deploy/", "@artifact/", strategy("Append"))},
			is: ErrInvalidSpec, message: "unknown strategy 'Append'"},
		{name: "absolute symlink out", ops: []sourceextensionsv1beta1.CopyOperation{cp("@src/links/abs", "@artifact/x")},
			is: ErrUnsafeSource, message: "symlink 'links/abs' points outside the source"},
		{name: "relative symlink out by glob", ops: []sourceextensionsv1beta1.CopyOperation{cp("@src/links/*", "@artifact/", exclude("abs"))},
			is: ErrUnsafeSource, message: "points to a directory"},
		{name: "relative symlink out", ops: []sourceextensionsv1beta1.CopyOperation{cp("@src/links/", "@artifact/", exclude("abs", "dir"))},
			is: ErrUnsafeSource, message: "symlink 'links/rel' points outside the source"},
		{name: "tarball bomb", ops: []sourceextensionsv1beta1.CopyOperation{cp("@src/bomb/bomb.tgz", "@artifact/", strategy(sourceextensionsv1beta1.ExtractStrategy))},
			opts: Options{MaxExtractSize: 1 << 20}, is: ErrTooLarge, message: "unpacks to more than 1048576 bytes"},
		{name: "tarball bomb against the artifact bound", ops: []sourceextensionsv1beta1.CopyOperation{cp("@src/bomb/*.tgz", "@artifact/", strategy(sourceextensionsv1beta1.ExtractStrategy))},
			opts: Options{MaxSize: 2 << 20}, is: ErrTooLarge, message: "unpacks to more than 2097152 bytes"},
		{name: "compressed tarball bound", ops: []sourceextensionsv1beta1.CopyOperation{cp("@src/bomb/bomb.tgz", "@artifact/", strategy(sourceextensionsv1beta1.ExtractStrategy))},
			opts: Options{MaxTarballSize: 100}, is: ErrTooLarge, message: "more than the 100 allowed"},
		{name: "file count bound", ops: []sourceextensionsv1beta1.CopyOperation{cp("@src/", "@artifact/", exclude("links", "bomb"))},
			opts: Options{MaxFiles: 1}, is: ErrTooLarge, message: "more than 1 files"},
		{name: "size bound", ops: []sourceextensionsv1beta1.CopyOperation{cp("@src/deploy/app.yaml", "@artifact/")},
			opts: Options{MaxSize: 3}, is: ErrTooLarge, message: "over 3 bytes"},
		{name: "no match", ops: []sourceextensionsv1beta1.CopyOperation{cp("@src/nothing/**", "@artifact/")},
			message: "no files match pattern 'nothing/**' in source 'src'"},
		{name: "all excluded", ops: []sourceextensionsv1beta1.CopyOperation{cp("@src/deploy/*", "@artifact/", exclude("*.yaml"))},
			message: "all files matching pattern 'deploy/*' in source 'src' were excluded"},
		{name: "missing file", ops: []sourceextensionsv1beta1.CopyOperation{cp("@src/deploy/none.yaml", "@artifact/")},
			message: "source 'deploy/none.yaml' does not exist"},
		{name: "extract a directory", ops: []sourceextensionsv1beta1.CopyOperation{cp("@src/deploy", "@artifact/", strategy(sourceextensionsv1beta1.ExtractStrategy))},
			message: "extract strategy is not supported for directories"},
		{name: "extract a non-tarball", ops: []sourceextensionsv1beta1.CopyOperation{cp("@src/deploy/app.yaml", "@artifact/", strategy(sourceextensionsv1beta1.ExtractStrategy))},
			message: "extract strategy requires tarball file"},
		{name: "merge a list", ops: []sourceextensionsv1beta1.CopyOperation{
			cp("@src/deploy/app.yaml", "@artifact/v.yaml"),
			cp("@src/list.yaml", "@artifact/v.yaml", strategy(sourceextensionsv1beta1.MergeStrategy)),
		}, message: "failed to parse 'list.yaml' as a YAML map"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := t.TempDir()
			_, err := Build(context.Background(), tt.ops, sources, dst, tt.opts)
			if err == nil {
				t.Fatalf("Build succeeded, want an error containing %q", tt.message)
			}
			if !strings.Contains(err.Error(), tt.message) {
				t.Errorf("error %q does not contain %q", err, tt.message)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q is not %v", err, tt.is)
			}
			if strings.Contains(err.Error(), src) {
				t.Errorf("error %q names the temporary source directory", err)
			}
			if data, _ := os.ReadFile(filepath.Join(dst, "x")); strings.Contains(string(data), "stolen") {
				t.Error("a file from outside the source was copied")
			}
		})
	}
}

func TestBuildFollowsLinkInsideSource(t *testing.T) {
	src := hostile(t)
	dst := t.TempDir()
	if _, err := Build(context.Background(), []sourceextensionsv1beta1.CopyOperation{cp("@src/links/ok.yaml", "@artifact/")}, Sources{"src": src}, dst, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := renderTree(t, dst); got != "ok.yaml -rw-r--r--\n  | kind: A\n" {
		t.Errorf("got %q", got)
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"a/**", "a", true},
		{"a/**", "a/b/c", true},
		{"a/**", "b", false},
		{"**/*.yaml", "x.yaml", true},
		{"**/*.yaml", "a/b/x.yaml", true},
		{"**/*.yaml", "a/b/x.yml", false},
		{"a/*/k.yaml", "a/b/k.yaml", true},
		{"a/*/k.yaml", "a/b/c/k.yaml", false},
		{"**/testdata/**", "x/testdata/y/z", true},
		{"a/**/z", "a/z", true},
		{"a/**/z", "a/b/c/z", true},
		{"[ab].yaml", "b.yaml", true},
		{"?.yaml", "ab.yaml", false},
	}
	for _, tt := range tests {
		if got := match(tt.pattern, tt.name); got != tt.want {
			t.Errorf("match(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestMergeValues(t *testing.T) {
	dst := map[string]any{"a": map[string]any{"b": 1, "c": 2}, "l": []any{1, 2}, "keep": true}
	src := map[string]any{"a": map[string]any{"c": 3, "d": 4}, "l": []any{9}, "n": nil}
	got := fmt.Sprint(MergeValues(dst, src))
	want := "map[a:map[b:1 c:3 d:4] keep:true l:[9] n:<nil>]"
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
