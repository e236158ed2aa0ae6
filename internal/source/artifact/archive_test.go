package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWriteArchiveIsDeterministic(t *testing.T) {
	tree := []node{
		file("README.md", "# app\n"),
		file("deploy/app.yaml", "kind: Deployment\n"),
		file("deploy/svc.yaml", "kind: Service\n"),
		exe("scripts/run.sh", "#!/bin/sh\n"),
		dir("empty"),
		file("deploy/overlays/prod/kustomization.yaml", "resources: []\n"),
		file(strings.Repeat("long-name/", 12)+"file.yaml", "x: 1\n"), // > 100 chars: PAX header
		file("ünïcode.yaml", "u: 1\n"),
	}
	a, b := t.TempDir(), t.TempDir()
	writeTree(t, a, tree...)
	reversed := append([]node(nil), tree...)
	for i, j := 0, len(reversed)-1; i < j; i, j = i+1, j-1 {
		reversed[i], reversed[j] = reversed[j], reversed[i]
	}
	writeTree(t, b, reversed...)

	// Different times and permission bits that carry no meaning.
	old := time.Date(2001, 2, 3, 4, 5, 6, 7, time.UTC)
	err := filepath.Walk(b, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() && fi.Mode()&0o111 == 0 {
			if err := os.Chmod(p, 0o600); err != nil {
				return err
			}
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}

	da, _ := archiveBytes(t, a, ArchiveOptions{})
	db, _ := archiveBytes(t, b, ArchiveOptions{})
	if !bytes.Equal(da, db) {
		t.Fatalf("archives differ: %d vs %d bytes", len(da), len(db))
	}
	again, _ := archiveBytes(t, a, ArchiveOptions{})
	if !bytes.Equal(da, again) {
		t.Fatal("archiving the same tree twice gave different bytes")
	}
	dga, _ := Digest(SHA256, bytes.NewReader(da))
	dgb, _ := Digest(SHA256, bytes.NewReader(db))
	if dga != dgb {
		t.Fatalf("digests differ: %s vs %s", dga, dgb)
	}

	zr, err := gzip.NewReader(bytes.NewReader(da))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || zr.Comment != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header carries name=%q comment=%q mtime=%v", zr.Name, zr.Comment, zr.ModTime)
	}
}

func TestWriteArchiveEntries(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root,
		file("b.yaml", "b"),
		file("a/z.yaml", "z"),
		exe("a/run.sh", "#!/bin/sh"),
		file("a.yaml", "a"),
		dir("a/empty"),
	)
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, stats := archiveBytes(t, root, ArchiveOptions{})
	got := readArchive(t, data)
	want := []entry{
		{Name: "a/", Type: tar.TypeDir, Mode: 0o755},
		{Name: "a/empty/", Type: tar.TypeDir, Mode: 0o755},
		{Name: "a/run.sh", Type: tar.TypeReg, Mode: 0o755, Content: "#!/bin/sh"},
		{Name: "a/z.yaml", Type: tar.TypeReg, Mode: 0o644, Content: "z"},
		{Name: "a.yaml", Type: tar.TypeReg, Mode: 0o644, Content: "a"},
		{Name: "b.yaml", Type: tar.TypeReg, Mode: 0o644, Content: "b"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if stats.Files != 4 || stats.Dirs != 2 || stats.CompressedSize != int64(len(data)) || stats.Size <= stats.CompressedSize {
		t.Errorf("stats = %+v (archive %d bytes)", stats, len(data))
	}
}

// TestWriteArchiveSymlinks checks the link policy on a root next to an
// "outside" directory holding a secret that must never be archived.
func TestWriteArchiveSymlinks(t *testing.T) {
	const secret = "TOP-SECRET"
	tests := []struct {
		name      string
		tree      func(root, outside string) []node
		policy    SymlinkPolicy
		wantFiles map[string]string
		wantSkip  []string
	}{
		{
			name: "file link inside is stored as the target's content",
			tree: func(_, _ string) []node {
				return []node{file("data/real.yaml", "real"), symlink("link.yaml", "data/real.yaml")}
			},
			wantFiles: map[string]string{"data/real.yaml": "real", "link.yaml": "real"},
		},
		{
			name: "directory link inside is walked under the link's path",
			tree: func(_, _ string) []node {
				return []node{
					file("library/lib/Chart.yaml", "name: lib"),
					symlink("charts/app/charts/lib", "../../../library/lib"),
					file("charts/app/Chart.yaml", "name: app"),
				}
			},
			wantFiles: map[string]string{
				"library/lib/Chart.yaml":           "name: lib",
				"charts/app/Chart.yaml":            "name: app",
				"charts/app/charts/lib/Chart.yaml": "name: lib",
			},
		},
		{
			name: "chain of links inside",
			tree: func(_, _ string) []node {
				return []node{file("c.txt", "c"), symlink("a", "b"), symlink("b", "sub/../c.txt"), dir("sub")}
			},
			wantFiles: map[string]string{"a": "c", "b": "c", "c.txt": "c"},
		},
		{
			name: "link inside a linked directory resolves from its real place",
			tree: func(_, _ string) []node {
				return []node{
					file("common/values.yaml", "v"),
					symlink("real/values.yaml", "../common/values.yaml"),
					symlink("alias", "real"),
				}
			},
			wantFiles: map[string]string{
				"common/values.yaml": "v", "real/values.yaml": "v", "alias/values.yaml": "v",
			},
		},
		{
			name: "relative link outside",
			tree: func(_, _ string) []node {
				return []node{file("ok", "ok"), symlink("evil", "../outside/secret")}
			},
			wantFiles: map[string]string{"ok": "ok"},
			wantSkip:  []string{"evil"},
		},
		{
			name: "absolute link outside",
			tree: func(_, outside string) []node {
				return []node{symlink("evil", filepath.Join(outside, "secret"))}
			},
			wantSkip: []string{"evil"},
		},
		{
			name: "absolute link into the root is refused too",
			tree: func(root, _ string) []node {
				return []node{file("real", "r"), symlink("abs", filepath.Join(root, "real"))}
			},
			wantFiles: map[string]string{"real": "r"},
			wantSkip:  []string{"abs"},
		},
		{
			name: "chain that ends outside",
			tree: func(_, _ string) []node {
				return []node{symlink("a", "b"), symlink("b", "../outside/secret")}
			},
			wantSkip: []string{"a", "b"},
		},
		{
			name: "detour outside and back in",
			tree: func(root, _ string) []node {
				return []node{file("real", "r"), symlink("detour", "../"+filepath.Base(root)+"/real")}
			},
			wantFiles: map[string]string{"real": "r"},
			wantSkip:  []string{"detour"},
		},
		{
			name: "dot-dot through a link to the root",
			tree: func(_, _ string) []node {
				return []node{symlink("self", "."), symlink("d/escape", "../self/../outside/secret"), dir("d")}
			},
			wantSkip: []string{"d/escape", "self"},
		},
		{
			name: "directory link outside",
			tree: func(_, _ string) []node {
				return []node{symlink("out", "../outside")}
			},
			wantSkip: []string{"out"},
		},
		{
			name: "dangling and looping links",
			tree: func(_, _ string) []node {
				return []node{symlink("dangling", "nowhere"), symlink("loop1", "loop2"), symlink("loop2", "loop1")}
			},
			wantSkip: []string{"dangling", "loop1", "loop2"},
		},
		{
			name: "link to an ancestor directory",
			tree: func(_, _ string) []node {
				return []node{file("a/f", "f"), symlink("a/up", ".."), symlink("a/here", ".")}
			},
			wantFiles: map[string]string{"a/f": "f"},
			wantSkip:  []string{"a/here", "a/up"},
		},
		{
			name:   "SkipSymlinks leaves every link out",
			policy: SkipSymlinks,
			tree: func(_, _ string) []node {
				return []node{file("real", "r"), symlink("link", "real"), symlink("evil", "../outside/secret")}
			},
			wantFiles: map[string]string{"real": "r"},
			wantSkip:  []string{"evil", "link"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
			writeTree(t, outside, file("secret", secret))
			if err := os.MkdirAll(root, 0o755); err != nil {
				t.Fatal(err)
			}
			writeTree(t, root, tt.tree(root, outside)...)

			data, stats := archiveBytes(t, root, ArchiveOptions{Symlinks: tt.policy})
			entries := readArchive(t, data)
			got := contents(entries)
			if tt.wantFiles == nil {
				tt.wantFiles = map[string]string{}
			}
			if diff := cmp.Diff(tt.wantFiles, got); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			var skipped []string
			for _, s := range stats.SkippedLinks {
				skipped = append(skipped, s.Path)
				if s.Reason == "" {
					t.Errorf("skipped link %s has no reason", s.Path)
				}
			}
			if diff := cmp.Diff(tt.wantSkip, skipped); diff != "" {
				t.Errorf("skipped links (-want +got):\n%s", diff)
			}
			for _, e := range entries {
				if strings.Contains(e.Content, secret) {
					t.Fatalf("%s carries the secret from outside the root", e.Name)
				}
			}
		})
	}
}

func TestWriteArchiveSizeBounds(t *testing.T) {
	root := t.TempDir()
	random := make([]byte, 256<<10)
	rand.Read(random)
	writeTree(t, root, file("random.bin", string(random)))

	tests := []struct {
		name string
		opts ArchiveOptions
	}{
		{"uncompressed", ArchiveOptions{MaxSize: 64 << 10}},
		{"compressed", ArchiveOptions{MaxCompressedSize: 64 << 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := WriteArchive(context.Background(), &bytes.Buffer{}, root, tt.opts)
			if !errors.Is(err, ErrArchiveTooLarge) {
				t.Fatalf("err = %v, want ErrArchiveTooLarge", err)
			}
		})
	}
	if _, err := WriteArchive(context.Background(), &bytes.Buffer{}, root, ArchiveOptions{MaxSize: -1, MaxCompressedSize: -1}); err != nil {
		t.Fatalf("unbounded: %v", err)
	}
}

func TestWriteArchiveEntryBound(t *testing.T) {
	// Each level doubles the tree through two links to the level below:
	// 2^24 paths from 50 entries on disk.
	defer func(n int) { maxTreeEntries = n }(maxTreeEntries)
	maxTreeEntries = 2_000
	root := t.TempDir()
	writeTree(t, root, file("l0/f", "f"))
	for i := 1; i <= 24; i++ {
		prev := "../l" + strconv.Itoa(i-1)
		writeTree(t, root, symlink("l"+strconv.Itoa(i)+"/a", prev), symlink("l"+strconv.Itoa(i)+"/b", prev))
	}
	_, err := WriteArchive(context.Background(), &bytes.Buffer{}, root, ArchiveOptions{MaxSize: -1, MaxCompressedSize: -1})
	if !errors.Is(err, ErrArchiveTooLarge) {
		t.Fatalf("err = %v, want ErrArchiveTooLarge", err)
	}
}

func TestWriteArchiveCancelled(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, file("a", "a"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := WriteArchive(ctx, &bytes.Buffer{}, root, ArchiveOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
