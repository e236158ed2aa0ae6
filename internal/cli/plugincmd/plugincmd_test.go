package plugincmd

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

func TestBinName(t *testing.T) {
	for _, tc := range []struct {
		bin, want, err string
	}{
		{"flux-operator", "flux-operator", ""},
		{"weir-x", "weir-x", ""},
		{"", "flux-p", ""},
		{"../flux-p", "", "invalid bin"},
		{"/usr/local/bin/flux-p", "", "invalid bin"},
		{`flux-p\x`, "", "invalid bin"},
		{"kubectl", "", "invalid bin"},
	} {
		got, err := binName(&Manifest{Name: "p", Bin: tc.bin})
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("binName(%q) = %q, %v; want %q, %q", tc.bin, got, err, tc.want, tc.err)
		}
	}
}

func TestResolve(t *testing.T) {
	m := &Manifest{Name: "p", Versions: []Version{
		{Version: "2.0.0", Platforms: []Platform{{OS: "linux", Arch: "amd64", Checksum: "sha256:22"}}},
		{Version: "1.0.0", Platforms: []Platform{{OS: "linux", Arch: "amd64", Checksum: "sha256:11"}, {OS: "darwin", Arch: "arm64", Checksum: "sha256:1d"}}},
	}}
	for _, tc := range []struct {
		version, goos, want, err string
	}{
		{"", "linux", "2.0.0", ""},
		{"1.0.0", "darwin", "1.0.0", ""},
		{"sha256:11", "linux", "1.0.0", ""},
		{"sha256:1d", "linux", "", `digest "sha256:1d" not found for plugin "p" on linux/`},
		{"", "darwin", "", `plugin "p" v2.0.0 has no binary for darwin/`},
		{"3.0.0", "linux", "", `version "3.0.0" not found for plugin "p"`},
	} {
		arch := "amd64"
		if tc.goos == "darwin" {
			arch = "arm64"
		}
		v, _, err := resolve(m, tc.version, tc.goos, arch)
		switch {
		case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)):
			t.Errorf("resolve(%q, %s): %v, want error %q", tc.version, tc.goos, err, tc.err)
		case tc.err == "" && (err != nil || v.Version != tc.want):
			t.Errorf("resolve(%q, %s): %v %v, want %s", tc.version, tc.goos, v, err, tc.want)
		}
	}
	if _, _, err := resolve(&Manifest{Name: "p"}, "", "linux", "amd64"); err == nil || err.Error() != `plugin "p" has no versions` {
		t.Errorf("no versions: %v", err)
	}
}

// TestDiscover: weir-NAME shadows flux-NAME; builtins, reserved names,
// receipts, directories and files without an executable bit are not
// plugins.
func TestDiscover(t *testing.T) {
	dir := t.TempDir()
	for name, mode := range map[string]os.FileMode{
		"flux-a": 0o755, "weir-a": 0o755, "flux-b": 0o755, "flux-b.yaml": 0o644, "flux-get": 0o755,
		"flux-plugin": 0o755, "flux-c": 0o644, "kubectl-d": 0o755, "flux-": 0o755,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "flux-e"), 0o755); err != nil {
		t.Fatal(err)
	}
	got := Discover(dir, map[string]bool{"get": true})
	want := []Plugin{{"a", filepath.Join(dir, "weir-a")}, {"b", filepath.Join(dir, "flux-b")}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Discover = %v, want %v", got, want)
	}
}

// TestInstallRefuses: an archive claiming more than MaxArchiveSize, one
// whose entries climb out of the directory and one without the binary
// are refused, and the plugin directory stays empty.
func TestInstallRefuses(t *testing.T) {
	evil := tarOf(t, "../flux-p", []byte("#!/bin/sh\n"))
	other := tarOf(t, "README", []byte("x"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/huge.tar.gz":
			w.Header().Set("Content-Length", strconv.FormatInt(MaxArchiveSize+1, 10))
			_, _ = w.Write([]byte("x"))
		case "/evil.tar":
			_, _ = w.Write(evil)
		case "/other.tar":
			_, _ = w.Write(other)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	in := &installer{http: srv.Client(), now: time.Now}
	m := &Manifest{Name: "p", Bin: "flux-p"}
	for _, tc := range []struct {
		p   Platform
		err string
	}{
		{Platform{URL: srv.URL + "/huge.tar.gz", Checksum: "sha256:0"}, "plugin archive is 268435457 bytes, more than the 268435456 allowed"},
		{Platform{URL: srv.URL + "/evil.tar", Checksum: digest(evil)}, "unpacking plugin archive: "},
		{Platform{URL: srv.URL + "/other.tar", Checksum: digest(other)}, `binary "flux-p" not found in archive`},
		{Platform{URL: srv.URL + "/other.tar", Checksum: digest(other), ExtractPath: "../README"}, `binary "../README" not found in archive`},
	} {
		err := in.install(context.Background(), dir, m, &Version{Version: "1"}, &tc.p)
		if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
			t.Errorf("install %s: %v, want %q", tc.p.URL, err, tc.err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("install %s left %v", tc.p.URL, entries)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "flux-p")); err == nil {
		t.Error("an entry climbing out of the archive was written")
	}
}

func tarOf(t *testing.T, name string, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	_, _ = tw.Write(data)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// digest is a checksum in the catalog's form.
func digest(b []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(b)) }

// FuzzManifest: whatever a catalog serves, the file an install would write
// is a bare flux-/weir- name, and resolving a version never panics.
func FuzzManifest(f *testing.F) {
	f.Add([]byte("apiVersion: cli.fluxcd.io/v1beta1\nkind: Plugin\nname: p\nbin: flux-p\nversions:\n- version: 1.0.0\n  platforms:\n  - {os: linux, arch: amd64, url: http://127.0.0.1/p.tgz, checksum: 'sha256:00'}\n"), "1.0.0")
	f.Add([]byte("name: p\nbin: ../../etc/flux-p\n"), "sha256:00")
	f.Fuzz(func(t *testing.T, data []byte, version string) {
		var m Manifest
		if yaml.Unmarshal(data, &m) != nil {
			return
		}
		if bin, err := binName(&m); err == nil {
			if filepath.Base(bin) != bin || strings.ContainsAny(bin, `/\`) || bin == "." || bin == ".." ||
				(!strings.HasPrefix(bin, fluxPrefix) && !strings.HasPrefix(bin, weirPrefix)) {
				t.Fatalf("unsafe bin %q accepted", bin)
			}
		}
		_, _, _ = resolve(&m, version, "linux", "amd64")
	})
}
