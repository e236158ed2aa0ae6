package pushcmd_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/pushcmd"
	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

func push(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	deps := &clideps.Deps{Timeout: 30 * time.Second, Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }}
	cmd := pushcmd.NewCommand(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, deps)
	cmd.SetArgs(append([]string{"artifact"}, args...))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err = cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestPushArtifact(t *testing.T) {
	reg := ociregistry.New(t, ociregistry.Options{})
	dir := tree(t, map[string]string{
		"app/deploy.yaml": "kind: Deployment\n",
		"app/secret.env":  "x=1\n",
		"docs/README.md":  "# x\n",
		".sourceignore":   "docs/\n",
	})
	url := "oci://" + reg.Host() + "/org/app:v1"
	args := []string{url, "--path", dir, "--source", "https://example.invalid/app.git", "--revision", "main@sha1:abc", "--ignore-paths", "*.env", "-a", "team=core"}

	_, stderr, err := push(t, append(args, "--reproducible")...)
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	if !strings.Contains(stderr, "✚ pushing artifact to "+reg.Host()+"/org/app:v1") || !strings.Contains(stderr, "✔ artifact successfully pushed to "+reg.Host()+"/org/app@sha256:") {
		t.Errorf("unexpected progress lines:\n%s", stderr)
	}
	first, _, err := push(t, append(args, "--reproducible", "-o", "json")...)
	if err != nil {
		t.Fatalf("second push: %v", err)
	}
	second, _, err := push(t, append(args, "--reproducible", "-o", "json")...)
	if err != nil || first != second {
		t.Errorf("reproducible pushes differ (%v):\n%s\n%s", err, first, second)
	}
	if !strings.Contains(first, `"tag": "v1"`) || !strings.Contains(first, `"digest": "sha256:`) {
		t.Errorf("unexpected json:\n%s", first)
	}

	ref, _ := name.ParseReference(reg.Host() + "/org/app:v1")
	img, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := img.Manifest()
	if string(m.MediaType) != "application/vnd.oci.image.manifest.v1+json" || string(m.Config.MediaType) != sourcev1.OCIArtifactConfigMediaType ||
		len(m.Layers) != 1 || string(m.Layers[0].MediaType) != "application/vnd.cncf.flux.content.v1.tar+gzip" {
		t.Errorf("manifest is not Flux's layout: %+v", m)
	}
	want := map[string]string{
		"org.opencontainers.image.source":   "https://example.invalid/app.git",
		"org.opencontainers.image.revision": "main@sha1:abc",
		"org.opencontainers.image.created":  "1970-01-01T00:00:00Z",
		"team":                              "core",
	}
	for k, v := range want {
		if m.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, m.Annotations[k], v)
		}
	}
	layers, _ := img.Layers()
	rc, _ := layers[0].Compressed()
	defer rc.Close()
	out := t.TempDir()
	if err := artifact.Untar(rc, out, 0); err != nil {
		t.Fatal(err)
	}
	var got []string
	_ = filepath.WalkDir(out, func(p string, d os.DirEntry, _ error) error {
		if !d.IsDir() {
			r, _ := filepath.Rel(out, p)
			got = append(got, filepath.ToSlash(r))
		}
		return nil
	})
	if strings.Join(got, ",") != ".sourceignore,app/deploy.yaml" {
		t.Errorf("files in the layer: %v", got)
	}

	// Without --reproducible the created time is the clock's.
	if _, _, err := push(t, args...); err != nil {
		t.Fatal(err)
	}
	img, _ = remote.Image(ref)
	m, _ = img.Manifest()
	if m.Annotations["org.opencontainers.image.created"] != "2026-01-02T03:04:05Z" {
		t.Errorf("created = %q", m.Annotations["org.opencontainers.image.created"])
	}
}

func TestPushArtifactErrors(t *testing.T) {
	dir := tree(t, map[string]string{"a.yaml": "a: 1\n"})
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"missing path", []string{"oci://127.0.0.1:1/org/app:v1", "--path", filepath.Join(dir, "nope")}, "invalid path"},
		{"no path", []string{"oci://127.0.0.1:1/org/app:v1"}, "--path is required"},
		{"not oci", []string{"https://127.0.0.1:1/org/app:v1", "--path", dir}, "oci://"},
		{"unreachable", []string{"oci://127.0.0.1:1/org/app:v1", "--path", dir}, "pushing artifact to 127.0.0.1:1/org/app:v1"},
		{"bad creds", []string{"oci://127.0.0.1:1/org/app:v1", "--path", dir, "--creds", ":x"}, "invalid credentials"},
		{"bad annotation", []string{"oci://127.0.0.1:1/org/app:v1", "--path", dir, "-a", "novalue"}, "invalid annotation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := push(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
