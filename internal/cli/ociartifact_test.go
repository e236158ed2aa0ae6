package cli_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
)

// writeTree writes files (slash paths to contents) under a new directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// readTree reads every regular file under dir into slash paths to contents.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// artifactCase is one run of an `… artifact` verb; its output is compared
// with a golden file after the registry address and local paths are
// replaced by REGISTRY, SRC and OUT.
type artifactCase struct {
	name   string
	args   []string
	golden string
	code   int
}

func runArtifactCases(t *testing.T, reg *ociregistry.Registry, replace map[string]string, cases []artifactCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := weir(t, c.args...)
			if res.Code != c.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", res.Code, c.code, res.Stderr)
			}
			got := "stdout:\n" + res.Stdout + "stderr:\n" + res.Stderr
			for from, to := range replace {
				got = strings.ReplaceAll(got, from, to)
			}
			got = strings.ReplaceAll(got, reg.Host(), "REGISTRY")
			assertGolden(t, c.golden, got)
		})
	}
}

var appFiles = map[string]string{
	"deploy/app.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n",
	"deploy/nested/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: app\n",
	"deploy/local.env":       "TOKEN=x\n",
	"docs/README.md":         "# app\n",
	".sourceignore":          "docs/\n",
}

// TestOCIArtifactPushPull pushes a directory as Flux does and pulls it back:
// the same files minus those .sourceignore and --ignore-paths leave out,
// one digest for two --reproducible pushes, by tag and by digest.
func TestOCIArtifactPushPull(t *testing.T) {
	reg := ociregistry.New(t, ociregistry.Options{})
	src := writeTree(t, appFiles)
	out := t.TempDir()
	url := "oci://" + reg.Host() + "/org/app"
	push := []string{"push", "artifact", url + ":v1.0.0", "--path", src, "--source", "https://git.example/org/app.git",
		"--revision", "main@sha1:0123456789abcdef0123456789abcdef01234567", "--ignore-paths", "*.env", "--reproducible"}
	replace := map[string]string{src: "SRC", out: "OUT"}

	runArtifactCases(t, reg, replace, []artifactCase{
		{"push", push, "ociartifact/push.golden", 0},
		{"push again, json", append(push, "-o", "json"), "ociartifact/push.json.golden", 0},
		{"push yaml", append(push, "-o", "yaml"), "ociartifact/push.yaml.golden", 0},
		{"pull", []string{"pull", "artifact", url + ":v1.0.0", "--output", filepath.Join(out, "tag")}, "ociartifact/pull.golden", 0},
	})
	want := map[string]string{}
	for p, c := range appFiles {
		if !strings.HasSuffix(p, ".env") && !strings.HasPrefix(p, "docs/") {
			want[p] = c
		}
	}
	if diff := cmp.Diff(want, readTree(t, filepath.Join(out, "tag"))); diff != "" {
		t.Errorf("pulled files (-want +got):\n%s", diff)
	}

	digest := strings.TrimSpace(weir(t, "push", "artifact", url+":v1.0.0", "--path", src, "--ignore-paths", "*.env", "-o", "yaml").Stdout)
	_, digest, _ = strings.Cut(digest, "digest: ")
	digest, _, _ = strings.Cut(digest, "\n")
	res := weir(t, "pull", "artifact", url+"@"+digest, "--output", filepath.Join(out, "digest"))
	if res.Code != 0 {
		t.Fatalf("pull by digest: %s", res.Stderr)
	}
	if diff := cmp.Diff(want, readTree(t, filepath.Join(out, "digest"))); diff != "" {
		t.Errorf("files pulled by digest (-want +got):\n%s", diff)
	}

	// A single file is packed at the archive's root.
	res = weir(t, "push", "artifact", url+":file", "--path", filepath.Join(src, "deploy", "app.yaml"))
	if res.Code != 0 {
		t.Fatalf("push file: %s", res.Stderr)
	}
	if res = weir(t, "pull", "artifact", url+":file", "-o", filepath.Join(out, "file")); res.Code != 0 {
		t.Fatalf("pull file: %s", res.Stderr)
	}
	if diff := cmp.Diff(map[string]string{"app.yaml": appFiles["deploy/app.yaml"]}, readTree(t, filepath.Join(out, "file"))); diff != "" {
		t.Errorf("files of a single-file artifact (-want +got):\n%s", diff)
	}
}

// TestOCIArtifactErrors checks that bad input fails with a clear message
// and a non-zero exit.
func TestOCIArtifactErrors(t *testing.T) {
	reg := ociregistry.New(t, ociregistry.Options{})
	src := writeTree(t, appFiles)
	url := "oci://" + reg.Host() + "/org/app"
	runArtifactCases(t, reg, map[string]string{src: "SRC"}, []artifactCase{
		{"push missing path", []string{"push", "artifact", url + ":v1", "--path", filepath.Join(src, "missing")}, "ociartifact/err-push-missing-path.golden", 1},
		{"push not oci", []string{"push", "artifact", "https://" + reg.Host() + "/org/app:v1", "--path", src}, "ociartifact/err-push-not-oci.golden", 1},
		{"push unreachable", []string{"push", "artifact", "oci://127.0.0.1:1/org/app:v1", "--path", src, "--timeout", "5s"}, "ociartifact/err-push-unreachable.golden", 1},
		{"pull missing tag", []string{"pull", "artifact", url + ":nope", "--output", t.TempDir()}, "ociartifact/err-pull-missing.golden", 1},
		{"pull no output", []string{"pull", "artifact", url + ":v1"}, "ociartifact/err-pull-no-output.golden", 1},
	})
}

// TestOCIArtifactTagList tags a pushed artifact and lists the repository,
// whole and through the regex and semver filters.
func TestOCIArtifactTagList(t *testing.T) {
	reg := ociregistry.New(t, ociregistry.Options{})
	src := writeTree(t, map[string]string{"app.yaml": "kind: ConfigMap\n"})
	url := "oci://" + reg.Host() + "/org/app"
	for _, v := range []string{"1.0.0", "1.2.0", "2.0.0"} {
		res := weir(t, "push", "artifact", url+":"+v, "--path", src, "--source", "https://git.example/org/app.git",
			"--revision", v+"@sha1:0123456789abcdef0123456789abcdef01234567", "--reproducible")
		if res.Code != 0 {
			t.Fatalf("push %s: %s", v, res.Stderr)
		}
	}
	runArtifactCases(t, reg, nil, []artifactCase{
		{"tag", []string{"tag", "artifact", url + ":1.2.0", "--tag", "latest", "--tag", "stable"}, "ociartifact/tag.golden", 0},
		{"list", []string{"list", "artifacts", url}, "ociartifact/list.golden", 0},
		{"list regex", []string{"list", "artifacts", url, "--filter-regex", "^st"}, "ociartifact/list-regex.golden", 0},
		{"list semver", []string{"list", "artifacts", url, "--filter-semver", ">=1.1.0", "-o", "json"}, "ociartifact/list-semver.json.golden", 0},
		{"list yaml", []string{"list", "artifacts", url, "--filter-semver", "1.0.x", "-o", "yaml"}, "ociartifact/list-semver.yaml.golden", 0},
		{"list bad semver", []string{"list", "artifacts", url, "--filter-semver", "not a range"}, "ociartifact/err-list-semver.golden", 1},
		{"list with tag", []string{"list", "artifacts", url + ":v1"}, "ociartifact/err-list-tag.golden", 1},
		{"tag missing source", []string{"tag", "artifact", url + ":nope", "--tag", "x"}, "ociartifact/err-tag-missing.golden", 1},
	})
}

// TestOCIArtifactBuildDiff builds the tarball push would upload and diffs a
// pushed artifact against the directory it came from, then a changed one.
func TestOCIArtifactBuildDiff(t *testing.T) {
	reg := ociregistry.New(t, ociregistry.Options{})
	src := writeTree(t, appFiles)
	out := filepath.Join(t.TempDir(), "artifact.tgz")
	url := "oci://" + reg.Host() + "/org/app:v1"
	if res := weir(t, "push", "artifact", url, "--path", src, "--ignore-paths", "*.env"); res.Code != 0 {
		t.Fatalf("push: %s", res.Stderr)
	}
	runArtifactCases(t, reg, map[string]string{src: "SRC", out: "OUT"}, []artifactCase{
		{"build", []string{"build", "artifact", "--path", src, "--ignore-paths", "*.env", "--output", out}, "ociartifact/build.golden", 0},
		{"diff same", []string{"diff", "artifact", url, "--path", src, "--ignore-paths", "*.env"}, "ociartifact/diff-same.golden", 0},
		{"diff without ignore", []string{"diff", "artifact", url, "--path", src}, "ociartifact/diff-differs.golden", 1},
		{"diff missing path", []string{"diff", "artifact", url, "--path", filepath.Join(src, "nope")}, "ociartifact/err-diff-path.golden", 2},
		{"build missing path", []string{"build", "artifact", "--path", filepath.Join(src, "nope")}, "ociartifact/err-build-path.golden", 1},
	})
	// The built tarball is the pushed layer, byte for byte.
	built, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	res := weir(t, "push", "artifact", url, "--path", src, "--ignore-paths", "*.env", "-o", "json")
	if res.Code != 0 {
		t.Fatal(res.Stderr)
	}
	if !layerIs(t, reg.Host()+"/org/app:v1", built) {
		t.Error("build artifact wrote another tarball than push uploaded")
	}
}

// layerIs says whether the first layer of ref holds exactly content.
func layerIs(t *testing.T, ref string, content []byte) bool {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(r)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %v (%d)", err, len(layers))
	}
	rc, err := layers[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(b, content)
}
