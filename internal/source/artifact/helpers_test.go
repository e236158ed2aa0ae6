package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// node is one entry of a test tree: a file (Content), a directory (Dir), or
// a symbolic link (Link).
type node struct {
	Path    string
	Content string
	Exec    bool
	Dir     bool
	Link    string
}

func file(p, content string) node   { return node{Path: p, Content: content} }
func exe(p, content string) node    { return node{Path: p, Content: content, Exec: true} }
func dir(p string) node             { return node{Path: p, Dir: true} }
func symlink(p, target string) node { return node{Path: p, Link: target} }

// writeTree creates nodes under root in the order given.
func writeTree(t testing.TB, root string, nodes ...node) {
	t.Helper()
	for _, n := range nodes {
		p := filepath.Join(root, filepath.FromSlash(n.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case n.Dir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case n.Link != "":
			if err := os.Symlink(n.Link, p); err != nil {
				t.Fatal(err)
			}
		default:
			mode := os.FileMode(0o644)
			if n.Exec {
				mode = 0o755
			}
			if err := os.WriteFile(p, []byte(n.Content), mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, mode); err != nil { // beat the umask
				t.Fatal(err)
			}
		}
	}
}

// entry is what a test reads back from an archive.
type entry struct {
	Name    string
	Type    byte
	Mode    int64
	Content string
}

func archiveBytes(t testing.TB, dir string, opts ArchiveOptions) ([]byte, ArchiveStats) {
	t.Helper()
	var buf bytes.Buffer
	stats, err := WriteArchive(context.Background(), &buf, dir, opts)
	if err != nil {
		t.Fatalf("WriteArchive: %v", err)
	}
	return buf.Bytes(), stats
}

func readArchive(t testing.TB, data []byte) []entry {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var out []entry
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Uid != 0 || hdr.Gid != 0 || hdr.Uname != "" || hdr.Gname != "" || !hdr.ModTime.Equal(time.Unix(0, 0)) {
			t.Errorf("%s: header not normalised: uid=%d gid=%d uname=%q gname=%q mtime=%v",
				hdr.Name, hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname, hdr.ModTime)
		}
		out = append(out, entry{Name: hdr.Name, Type: hdr.Typeflag, Mode: hdr.Mode, Content: string(b)})
	}
}

// names lists archive entry names, directories with their trailing slash.
func names(entries []entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

// fileNames lists only the regular files of an archive, sorted.
func fileNames(entries []entry) []string {
	var out []string
	for _, e := range entries {
		if e.Type == tar.TypeReg {
			out = append(out, e.Name)
		}
	}
	slices.Sort(out)
	return out
}

func contents(entries []entry) map[string]string {
	m := map[string]string{}
	for _, e := range entries {
		if e.Type == tar.TypeReg {
			m[e.Name] = e.Content
		}
	}
	return m
}

// fakeClock is a settable clock for Storage.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

func newTestStorage(t testing.TB, opts Options) (*Storage, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "storage")
	s, err := NewStorage(root, "source-controller.flux-system.svc.cluster.local.", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, root
}
