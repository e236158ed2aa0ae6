package cli_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/weir-gitops/weir/internal/cli"
	"github.com/weir-gitops/weir/internal/cli/clideps"
)

// pluginCatalog serves a Flux plugin catalog on 127.0.0.1: catalog.yaml,
// one manifest per plugin and the archives they point at, and records the
// paths asked for.
type pluginCatalog struct {
	srv   *httptest.Server
	mu    sync.Mutex
	asked []string
	files map[string][]byte
}

func (c *pluginCatalog) paths() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.asked
	c.asked = nil
	return out
}

func newPluginCatalog(t *testing.T) *pluginCatalog {
	t.Helper()
	c := &pluginCatalog{files: map[string][]byte{}}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.asked = append(c.asked, r.Method+" "+r.URL.Path)
		data, ok := c.files[r.URL.Path]
		c.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(data)
	}))
	t.Cleanup(c.srv.Close)

	script := func(v string, code int) []byte {
		return fmt.Appendf(nil, "#!/bin/sh\necho \"hello %s: $*\"\necho \"to stderr\" >&2\nexit %d\n", v, code)
	}
	v1 := tarGz(t, map[string][]byte{"README.md": []byte("hello\n"), "flux-hello": script("v1", 0)})
	v2 := zipOf(t, map[string][]byte{"bin/flux-hello": script("v2", 7)})
	bad := tarGz(t, map[string][]byte{"flux-bad": script("bad", 0)})
	c.files["/archives/hello_1.0.0.tar.gz"] = v1
	c.files["/archives/hello_2.0.0.zip"] = v2
	c.files["/archives/bad_1.0.0.tar.gz"] = bad
	base := c.srv.URL
	c.files["/catalog/catalog.yaml"] = []byte(`apiVersion: cli.fluxcd.io/v1beta1
kind: PluginCatalog
plugins:
- name: hello
  description: Says hello from a shell script
  homepage: https://127.0.0.1/hello
- name: bad
  description: An archive whose checksum lies
`)
	c.files["/catalog/hello.yaml"] = fmt.Appendf(nil, `apiVersion: cli.fluxcd.io/v1beta1
kind: Plugin
name: hello
description: Says hello from a shell script
bin: flux-hello
versions:
- version: 2.0.0
  platforms:
  - {os: %[1]s, arch: %[2]s, url: %[3]s/archives/hello_2.0.0.zip, checksum: "%[4]s", extractPath: bin/flux-hello}
- version: 1.0.0
  platforms:
  - {os: plan9, arch: mips, url: %[3]s/archives/none.tar.gz, checksum: "sha256:00"}
  - {os: %[1]s, arch: %[2]s, url: %[3]s/archives/hello_1.0.0.tar.gz, checksum: "%[5]s"}
`, runtimeOS, runtimeArch, base, digestOf(v2), digestOf(v1))
	c.files["/catalog/bad.yaml"] = fmt.Appendf(nil, `apiVersion: cli.fluxcd.io/v1beta1
kind: Plugin
name: bad
bin: flux-bad
versions:
- version: 1.0.0
  platforms:
  - {os: %[1]s, arch: %[2]s, url: %[3]s/archives/bad_1.0.0.tar.gz, checksum: "sha256:%[4]s"}
`, runtimeOS, runtimeArch, base, strings.Repeat("ab", 32))
	return c
}

func digestOf(b []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(b)) }

func tarGz(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		hdr := &tar.Header{Name: n, Mode: 0o755, Size: int64(len(files[n])), Typeflag: tar.TypeReg,
			ModTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write(files[n])
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zipOf(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for n, data := range files {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Deflate,
			Modified: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// runPlugin runs weir without the API server's kubeconfig: plugin verbs
// never talk to the cluster, and a plugin receives exactly the arguments
// after its name.
func runPlugin(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	code := cli.ExecuteContext(context.Background(), streams, args, func(d *clideps.Deps) {
		d.Now = func() time.Time { return time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC) }
	})
	return result{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestPlugins drives the plugin verbs against a local catalog: search,
// a refused checksum that leaves nothing behind, install of an older
// version, running it, update to the newest, a plugin put there by hand,
// uninstall.
func TestPlugins(t *testing.T) {
	cat := newPluginCatalog(t)
	// A directory whose path has the same length on every run: the list
	// tables pad their PATH column to it, and t.TempDir's names vary in
	// length.
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("weir-plugins-%016x", rand.Uint64()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	t.Setenv("FLUXCD_PLUGINS", dir)
	t.Setenv("FLUXCD_PLUGIN_CATALOG", cat.srv.URL+"/catalog/")
	step := func(golden string, code int, args ...string) {
		t.Helper()
		res := runPlugin(t, args...)
		if res.Code != code {
			t.Errorf("%v: exit %d, want %d\n%s", args, res.Code, code, res.Stderr)
		}
		got := strings.ReplaceAll(strings.ReplaceAll(res.Output(), dir, "PLUGINS"), cat.srv.URL, "CATALOG")
		assertGolden(t, "plugin/"+golden, got)
	}
	asked := func(want ...string) {
		t.Helper()
		if got := cat.paths(); !slices.Equal(got, want) {
			t.Errorf("catalog asked for %q, want %q", got, want)
		}
	}

	step("list-empty.golden", 0, "plugin", "list")
	step("search.golden", 0, "plugin", "search")
	step("search-query.golden", 0, "plugin", "search", "SHELL")
	step("search-none.golden", 0, "plugin", "search", "zzz")
	asked("GET /catalog/catalog.yaml", "GET /catalog/catalog.yaml", "GET /catalog/catalog.yaml")

	step("install-bad-checksum.golden", 1, "plugin", "install", "bad")
	asked("GET /catalog/bad.yaml", "GET /archives/bad_1.0.0.tar.gz")
	if got := listDir(t, dir); len(got) != 0 {
		t.Errorf("a refused install left %v in the plugin directory", got)
	}
	step("install-unknown.golden", 1, "plugin", "install", "nope")
	step("install-no-version.golden", 1, "plugin", "install", "hello@9.9.9")
	cat.paths()

	step("install-v1.golden", 0, "plugin", "install", "hello@1.0.0")
	asked("GET /catalog/hello.yaml", "GET /archives/hello_1.0.0.tar.gz")
	if got := listDir(t, dir); !slices.Equal(got, []string{"flux-hello", "flux-hello.yaml"}) {
		t.Errorf("plugin directory holds %v, want the binary and its receipt", got)
	}
	receipt, _ := os.ReadFile(filepath.Join(dir, "flux-hello.yaml"))
	assertGolden(t, "plugin/receipt-v1.golden", strings.NewReplacer(cat.srv.URL, "CATALOG",
		"arch: "+runtimeArch, "arch: ARCH", "os: "+runtimeOS, "os: OS").Replace(string(receipt)))
	step("list-v1.golden", 0, "plugin", "list")
	step("run-v1.golden", 0, "hello", "a", "--flag", "b c")

	step("update.golden", 0, "plugin", "update")
	asked("GET /catalog/hello.yaml", "GET /archives/hello_2.0.0.zip")
	step("update-current.golden", 0, "plugin", "update", "hello")
	step("update-unknown.golden", 1, "plugin", "update", "nope")
	step("run-v2.golden", 7, "hello", "x")

	// A plugin copied in by hand, written for weir: listed as manual, left
	// alone by update.
	if err := os.WriteFile(filepath.Join(dir, "weir-manual"), []byte("#!/bin/sh\necho manual \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "flux-noexec"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	step("list-manual.golden", 0, "plugin", "list")
	step("update-manual.golden", 0, "plugin", "update")
	step("run-manual.golden", 0, "manual", "--help")

	step("uninstall.golden", 0, "plugin", "uninstall", "hello")
	if got := listDir(t, dir); !slices.Equal(got, []string{"flux-noexec", "weir-manual"}) {
		t.Errorf("after uninstall the plugin directory holds %v", got)
	}
	step("uninstall-again.golden", 1, "plugin", "uninstall", "hello")
	step("run-uninstalled.golden", 1, "hello")
}
