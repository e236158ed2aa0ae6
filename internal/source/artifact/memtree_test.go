package artifact

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// TestReadTreeAsUntar runs every Untar case through ReadTree: it refuses
// what Untar refuses with the same message, holds what Untar extracts, and
// sends every tarball with a link to disk.
func TestReadTreeAsUntar(t *testing.T) {
	for _, tt := range untarCases {
		if len(tt.prepare) > 0 {
			continue // a destination with content: only Untar has one
		}
		for _, compress := range []bool{false, true} {
			t.Run(tt.name, func(t *testing.T) {
				data := makeTar(t, compress, tt.members...)
				_, dest := untarSandbox(t)
				diskErr := Untar(bytes.NewReader(data), dest, untarTestMax)
				tree, err := ReadTree(bytes.NewReader(data), untarTestMax, 1<<20)
				if errors.Is(err, ErrNeedsDisk) {
					if !slices.ContainsFunc(tt.members, isLink) {
						t.Fatalf("ReadTree sent a tarball without links to disk: %v", err)
					}
					return
				}
				if diskErr != nil || err != nil {
					if err == nil || diskErr == nil || err.Error() != diskErr.Error() {
						t.Fatalf("ReadTree: %v\nUntar:    %v", err, diskErr)
					}
					return
				}
				if diff := cmp.Diff(readTree(t, dest), memContents(t, tree)); diff != "" {
					t.Errorf("tree (-disk +memory):\n%s", diff)
				}
			})
		}
	}
}

func isLink(m member) bool { return m.Type == tar.TypeSymlink || m.Type == tar.TypeLink }

// memContents maps the tree's regular files to their content.
func memContents(t testing.TB, tree *Tree) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := fs.WalkDir(tree, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(tree, p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReadTreeBudget(t *testing.T) {
	big := strings.Repeat("x", 3000)
	tests := []struct {
		name    string
		members []member
		budget  int64
		wantErr error
	}{
		{name: "within the budget", members: []member{reg("a", big), reg("b", big)}, budget: 8000},
		{name: "files over the budget", members: []member{reg("a", big), reg("b", big)}, budget: 5000, wantErr: ErrNeedsDisk},
		{name: "a replaced file is not counted twice", members: []member{reg("a", big[:1500]), reg("a", big[:1500]), reg("a", big[:1500])}, budget: 2500},
		{name: "entries count", members: manyDirs(10), budget: 9 * memEntryCost, wantErr: ErrNeedsDisk},
		{name: "the stream bound comes first", members: []member{reg("a", strings.Repeat("x", 10000))}, budget: 100, wantErr: ErrArchiveTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadTree(bytes.NewReader(makeTar(t, true, tt.members...)), untarTestMax, tt.budget)
			if tt.wantErr == nil && err != nil || !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

// TestTreeFS checks the tree against io/fs's own conformance test.
func TestTreeFS(t *testing.T) {
	data := makeTar(t, true, reg("deploy/app.yaml", "kind: ConfigMap\n"), dirm("empty/"),
		member{Name: "bin/run.sh", Body: "#!/bin/sh\n", Type: tar.TypeReg, Mode: 0o755}, reg("top", ""))
	tree, err := ReadTree(bytes.NewReader(data), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(tree, "deploy/app.yaml", "bin/run.sh", "top", "empty"); err != nil {
		t.Fatal(err)
	}
	fi, err := fs.Stat(tree, "bin/run.sh")
	if err != nil || fi.Mode() != 0o755 {
		t.Errorf("bin/run.sh: %v, %v; want mode 0755", fi, err)
	}
	if _, err := tree.ReadFile("../x"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("ReadFile(../x) = %v, want ErrInvalid", err)
	}
	if _, err := tree.ReadFile("nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(nope) = %v, want ErrNotExist", err)
	}
}

func TestFetchTree(t *testing.T) {
	artifacts := map[string][]byte{
		"/small.tar.gz":   makeTar(t, true, reg("deploy/app.yaml", "kind: ConfigMap\n")),
		"/link.tar.gz":    makeTar(t, true, reg("deploy/app.yaml", "kind: ConfigMap\n"), slink("current", "deploy")),
		"/large.tar.gz":   makeTar(t, true, reg("deploy/app.yaml", "kind: ConfigMap\n"), reg("blob", strings.Repeat("x", 4096))),
		"/hostile.tar.gz": makeTar(t, true, reg("deploy/app.yaml", "kind: ConfigMap\n"), reg("../evil", "x")),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(artifacts[r.URL.Path])
	}))
	defer srv.Close()
	tests := []struct {
		path     string
		wantDisk bool
		wantErr  error
	}{
		{path: "/small.tar.gz"},
		{path: "/link.tar.gz", wantDisk: true},
		{path: "/large.tar.gz", wantDisk: true},
		{path: "/hostile.tar.gz", wantErr: ErrUnsafeEntry},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			digest, err := Digest(SHA256, bytes.NewReader(artifacts[tt.path]))
			if err != nil {
				t.Fatal(err)
			}
			f := Fetcher{TempDir: t.TempDir(), MaxMemoryTree: 4096}
			made := filepath.Join(t.TempDir(), "out")
			tree, dir, err := f.FetchTree(context.Background(), srv.URL+tt.path, digest, func() (string, error) {
				return made, os.Mkdir(made, 0o755)
			})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			if tt.wantDisk {
				if tree != nil || dir != made {
					t.Fatalf("tree %v, dir %q; want the directory %q", tree, dir, made)
				}
				got, err = os.ReadFile(filepath.Join(dir, "deploy", "app.yaml"))
			} else {
				if tree == nil || dir != "" {
					t.Fatalf("tree %v, dir %q; want a tree", tree, dir)
				}
				got, err = fs.ReadFile(tree, "deploy/app.yaml")
			}
			if err != nil || string(got) != "kind: ConfigMap\n" {
				t.Fatalf("deploy/app.yaml = %q, %v", got, err)
			}
			if left, _ := os.ReadDir(f.TempDir); len(left) != 0 {
				t.Errorf("the download file was left behind")
			}
		})
	}
}

// TestTreeErrorsAsOS: the tree fails as the os package does on the same
// tree on disk, operation and errno alike.
func TestTreeErrorsAsOS(t *testing.T) {
	data := makeTar(t, false, reg("d/f", "x"), dirm("e/"))
	tree, err := ReadTree(bytes.NewReader(data), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	dest := t.TempDir()
	if err := Untar(bytes.NewReader(data), dest, 0); err != nil {
		t.Fatal(err)
	}
	ops := map[string]struct {
		disk func(string) error
		mem  func(string) error
	}{
		"stat":     {func(p string) error { _, err := os.Stat(p); return err }, func(n string) error { _, err := tree.Stat(n); return err }},
		"readfile": {func(p string) error { _, err := os.ReadFile(p); return err }, func(n string) error { _, err := tree.ReadFile(n); return err }},
		"readdir":  {func(p string) error { _, err := os.ReadDir(p); return err }, func(n string) error { _, err := tree.ReadDir(n); return err }},
	}
	for _, name := range []string{"d", "d/f", "d/f/g", "nope", "d/nope", "e", "e/nope/deeper"} {
		for op, f := range ops {
			t.Run(op+" "+name, func(t *testing.T) {
				diskErr, memErr := f.disk(filepath.Join(dest, name)), f.mem(name)
				want := ""
				if diskErr != nil {
					want = strings.ReplaceAll(diskErr.Error(), dest+"/", "")
				}
				got := ""
				if memErr != nil {
					got = memErr.Error()
				}
				if got != want {
					t.Errorf("memory %q, disk %q", got, want)
				}
			})
		}
	}
}
