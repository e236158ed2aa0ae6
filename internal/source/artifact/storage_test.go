package artifact

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

func object(ns, name string) metav1.Object {
	return &metav1.ObjectMeta{Namespace: ns, Name: name}
}

func TestNewArtifactFor(t *testing.T) {
	tests := []struct {
		hostname, wantURL string
	}{
		{"source-controller.flux-system.svc.cluster.local.", "http://source-controller.flux-system.svc.cluster.local./gitrepository/default/podinfo/abc.tar.gz"},
		{"localhost:9090", "http://localhost:9090/gitrepository/default/podinfo/abc.tar.gz"},
		{"https://artifacts.example.com/", "https://artifacts.example.com/gitrepository/default/podinfo/abc.tar.gz"},
	}
	for _, tt := range tests {
		s, err := NewStorage(t.TempDir(), tt.hostname, Options{})
		if err != nil {
			t.Fatal(err)
		}
		a := s.NewArtifactFor("GitRepository", object("default", "podinfo"), "main@sha1:abc", "abc.tar.gz")
		if a.Path != "gitrepository/default/podinfo/abc.tar.gz" || a.URL != tt.wantURL || a.Revision != "main@sha1:abc" {
			t.Errorf("NewArtifactFor = %+v", a)
		}
		s.Close()
	}
	if _, err := NewStorage(t.TempDir(), "", Options{}); err == nil {
		t.Error("empty hostname accepted")
	}
	if _, err := NewStorage(t.TempDir(), "h", Options{DigestAlgorithm: "blake3"}); err == nil {
		t.Error("unsupported digest algorithm accepted")
	}
}

func TestStorageArchive(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	for _, alg := range []Algorithm{SHA256, SHA384, SHA512} {
		t.Run(string(alg), func(t *testing.T) {
			s, root := newTestStorage(t, Options{DigestAlgorithm: alg, Now: clock.Now})
			src := t.TempDir()
			writeTree(t, src, file("deploy/app.yaml", "kind: Deployment\n"), file(".git/HEAD", "ref"))
			filter, err := NewFilter(src, nil)
			if err != nil {
				t.Fatal(err)
			}
			a := s.NewArtifactFor("GitRepository", object("default", "podinfo"), "main@sha1:abc", "abc.tar.gz")
			stats, err := s.Archive(context.Background(), &a, src, filter)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(root, "gitrepository", "default", "podinfo", "abc.tar.gz"))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := Digest(alg, bytes.NewReader(b))
			if a.Digest != want || !strings.HasPrefix(a.Digest, string(alg)+":") {
				t.Errorf("Digest = %s, want %s", a.Digest, want)
			}
			if a.Size == nil || *a.Size != int64(len(b)) || stats.CompressedSize != int64(len(b)) {
				t.Errorf("Size = %v, stats %d, file %d bytes", a.Size, stats.CompressedSize, len(b))
			}
			if !a.LastUpdateTime.Time.Equal(clock.now) {
				t.Errorf("LastUpdateTime = %v, want %v", a.LastUpdateTime, clock.now)
			}
			if fi, _ := os.Stat(filepath.Join(root, a.Path)); !fi.ModTime().Equal(clock.now) {
				t.Errorf("file time = %v, want the storage clock", fi.ModTime())
			}
			if got := fileNames(readArchive(t, b)); len(got) != 1 || got[0] != "deploy/app.yaml" {
				t.Errorf("archived %v", got)
			}
			if !s.Exists(a) {
				t.Error("Exists = false")
			}
			if err := s.Verify(a); err != nil {
				t.Errorf("Verify: %v", err)
			}
			if err := os.WriteFile(filepath.Join(root, a.Path), append(b, 0), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := s.Verify(a); !errors.Is(err, ErrDigestMismatch) {
				t.Errorf("Verify after tampering = %v, want ErrDigestMismatch", err)
			}
		})
	}
}

func TestStorageArchiveTooLargeLeavesNothing(t *testing.T) {
	src := t.TempDir()
	random := make([]byte, 200<<10)
	rand.Read(random)
	writeTree(t, src, file("big.bin", string(random)))
	tests := []struct {
		name string
		opts Options
	}{
		{"uncompressed", Options{MaxArchiveSize: 100 << 10}},
		{"compressed", Options{MaxArtifactSize: 100 << 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, root := newTestStorage(t, tt.opts)
			a := s.NewArtifactFor("GitRepository", object("default", "big"), "rev", "rev.tar.gz")
			_, err := s.Archive(context.Background(), &a, src, nil)
			if !errors.Is(err, ErrArchiveTooLarge) {
				t.Fatalf("err = %v, want ErrArchiveTooLarge", err)
			}
			left, err := os.ReadDir(filepath.Join(root, "gitrepository", "default", "big"))
			if err != nil {
				t.Fatal(err)
			}
			if len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
			if a.Digest != "" || a.Size != nil {
				t.Errorf("artifact filled after failure: %+v", a)
			}
		})
	}
}

// TestStorageArchiveIsAtomic looks at the final path while the archive is
// being written: it must hold the previous file, whole, until the rename.
func TestStorageArchiveIsAtomic(t *testing.T) {
	s, root := newTestStorage(t, Options{})
	src := t.TempDir()
	for i := range 50 {
		writeTree(t, src, file("f"+strings.Repeat("x", i)+".yaml", strings.Repeat("data ", 2000)))
	}
	a := s.NewArtifactFor("GitRepository", object("default", "app"), "rev", "rev.tar.gz")
	final := filepath.Join(root, filepath.FromSlash(a.Path))

	checks := 0
	observe := func(want []byte) Filter {
		return FilterFunc(func(string, bool) bool {
			got, err := os.ReadFile(final)
			switch {
			case want == nil && !errors.Is(err, os.ErrNotExist):
				t.Errorf("final path exists mid-write: %v", err)
			case want != nil && !bytes.Equal(got, want):
				t.Errorf("final path changed mid-write: %d bytes, want %d", len(got), len(want))
			}
			checks++
			return false
		})
	}
	if _, err := s.Archive(context.Background(), &a, src, observe(nil)); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(final)
	if err != nil {
		t.Fatal(err)
	}
	// Rewrite the same path with different content: readers keep seeing the
	// first file until the second is complete.
	writeTree(t, src, file("new.yaml", "new"))
	if _, err := s.Archive(context.Background(), &a, src, observe(first)); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(final)
	if bytes.Equal(first, second) || checks < 100 {
		t.Fatalf("second archive not observed (checks %d)", checks)
	}
	entries, _ := os.ReadDir(filepath.Dir(final))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the artifact", len(entries))
	}
}

func TestStorageCopy(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1700000000, 0)}
	s, root := newTestStorage(t, Options{Now: clock.Now, MaxArtifactSize: 1 << 10})
	index := []byte("apiVersion: v1\nentries: {}\n")

	a := s.NewArtifactFor("HelmRepository", object("flux-system", "bitnami"), "sha256:x", "index-x.yaml")
	if err := s.Copy(context.Background(), &a, bytes.NewReader(index)); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(index)
	if a.Digest != "sha256:"+hex.EncodeToString(sum[:]) || *a.Size != int64(len(index)) {
		t.Errorf("artifact = %+v", a)
	}

	p := filepath.Join(t.TempDir(), "layer.tgz")
	if err := os.WriteFile(p, index, 0o600); err != nil {
		t.Fatal(err)
	}
	b := s.NewArtifactFor("OCIRepository", object("flux-system", "manifests"), "latest@sha256:x", "x.tar.gz")
	if err := s.CopyFromPath(context.Background(), &b, p); err != nil {
		t.Fatal(err)
	}
	if b.Digest != a.Digest {
		t.Errorf("CopyFromPath digest %s, want %s", b.Digest, a.Digest)
	}
	if err := s.CopyFromPath(context.Background(), &b, filepath.Dir(p)); err == nil {
		t.Error("CopyFromPath accepted a directory")
	}

	big := s.NewArtifactFor("HelmRepository", object("flux-system", "huge"), "sha256:y", "index-y.yaml")
	err := s.Copy(context.Background(), &big, bytes.NewReader(make([]byte, 2<<10)))
	if !errors.Is(err, ErrArchiveTooLarge) {
		t.Fatalf("oversized copy: err = %v", err)
	}
	if left, _ := os.ReadDir(filepath.Join(root, "helmrepository", "flux-system", "huge")); len(left) != 0 {
		t.Errorf("oversized copy left %v", left)
	}

	if err := s.Remove(a); err != nil || s.Exists(a) {
		t.Errorf("Remove: %v, exists %v", err, s.Exists(a))
	}
	if err := s.Remove(a); err != nil {
		t.Errorf("second Remove: %v", err)
	}
	dirRel, err := s.RemoveAll("OCIRepository", "flux-system", "manifests")
	if err != nil || dirRel != "ocirepository/flux-system/manifests" {
		t.Errorf("RemoveAll = %q, %v", dirRel, err)
	}
	if _, err := os.Stat(filepath.Join(root, dirRel)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("object directory still there: %v", err)
	}
	if _, err := s.RemoveAll("OCIRepository", "..", ".."); !errors.Is(err, ErrInvalidPath) {
		t.Errorf("RemoveAll(.., ..) = %v, want ErrInvalidPath", err)
	}
}

func TestStorageRejectsInvalidPaths(t *testing.T) {
	s, _ := newTestStorage(t, Options{})
	for _, p := range []string{
		"", "a/b/c", "a/b/c/d/e", "/a/b/c", "../b/c/d", "a/../c/d", "a/b/c/..", "a/b/c/.", "a//c/d",
		"a/b/c/.tmp-file", `a/b/c\d/e`, "a/b/c/d\x00",
	} {
		a := meta.Artifact{Path: p, Digest: "sha256:" + strings.Repeat("0", 64)}
		if _, err := s.LocalPath(a); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("LocalPath(%q) = %v, want ErrInvalidPath", p, err)
		}
		if err := s.Copy(context.Background(), &a, strings.NewReader("x")); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("Copy(%q) = %v, want ErrInvalidPath", p, err)
		}
		if err := s.Remove(a); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("Remove(%q) = %v, want ErrInvalidPath", p, err)
		}
		if s.Exists(a) {
			t.Errorf("Exists(%q) = true", p)
		}
	}
}

// TestStorageIgnoresPlantedLinks plants a link in the storage directory that
// leads outside; writes, reads and deletions through it must all fail.
func TestStorageIgnoresPlantedLinks(t *testing.T) {
	s, root := newTestStorage(t, Options{})
	outside := t.TempDir()
	writeTree(t, outside, file("default/victim/keep.tar.gz", "precious"))
	if err := os.Symlink(outside, filepath.Join(root, "gitrepository")); err != nil {
		t.Fatal(err)
	}
	a := s.NewArtifactFor("GitRepository", object("default", "victim"), "rev", "new.tar.gz")
	if err := s.Copy(context.Background(), &a, strings.NewReader("x")); err == nil {
		t.Error("Copy wrote through a link leading out of the storage")
	}
	keep := meta.Artifact{Path: "gitrepository/default/victim/keep.tar.gz"}
	if s.Exists(keep) {
		t.Error("Exists followed the link")
	}
	if f, err := s.Open(keep); err == nil {
		f.Close()
		t.Error("Open followed the link")
	}
	if err := s.Remove(keep); err == nil {
		t.Error("Remove followed the link")
	}
	if _, err := s.RemoveAll("GitRepository", "default", "victim"); err == nil {
		t.Log("RemoveAll reported no error; checking the victim survived")
	}
	if b, err := os.ReadFile(filepath.Join(outside, "default", "victim", "keep.tar.gz")); err != nil || string(b) != "precious" {
		t.Fatalf("file outside the storage was touched: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "default", "victim", "new.tar.gz")); err == nil {
		t.Error("a file was created outside the storage")
	}
}

func TestStorageLock(t *testing.T) {
	s, _ := newTestStorage(t, Options{})
	ctx := context.Background()
	unlock, err := s.Lock(ctx, "GitRepository", "default", "app")
	if err != nil {
		t.Fatal(err)
	}
	// Another object is independent.
	other, err := s.Lock(ctx, "GitRepository", "default", "other")
	if err != nil {
		t.Fatal(err)
	}
	other()

	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := s.Lock(short, "gitrepository", "default", "app"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Lock = %v, want DeadlineExceeded", err)
	}

	acquired := make(chan func())
	go func() {
		u, err := s.Lock(ctx, "GitRepository", "default", "app")
		if err != nil {
			t.Error(err)
		}
		acquired <- u
	}()
	select {
	case <-acquired:
		t.Fatal("Lock acquired while held")
	case <-time.After(20 * time.Millisecond):
	}
	unlock()
	unlock() // idempotent
	select {
	case u := <-acquired:
		u()
	case <-time.After(5 * time.Second):
		t.Fatal("Lock not acquired after release")
	}
	if len(s.locks.locks) != 0 {
		t.Errorf("lock table holds %d entries after all releases", len(s.locks.locks))
	}
}

func TestParseDigest(t *testing.T) {
	tests := []struct {
		in      string
		wantAlg Algorithm
		ok      bool
	}{
		{"sha256:" + strings.Repeat("a", 64), SHA256, true},
		{"sha384:" + strings.Repeat("B", 96), SHA384, true},
		{"sha512:" + strings.Repeat("0", 128), SHA512, true},
		{"sha256:" + strings.Repeat("a", 63), "", false},
		{"sha256:" + strings.Repeat("g", 64), "", false},
		{"md5:" + strings.Repeat("a", 32), "", false},
		{strings.Repeat("a", 64), "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		alg, _, err := ParseDigest(tt.in)
		if (err == nil) != tt.ok || alg != tt.wantAlg {
			t.Errorf("ParseDigest(%q) = %q, %v", tt.in, alg, err)
		}
	}
	for in, want := range map[string]Algorithm{"": SHA256, "SHA512": SHA512, "sha384": SHA384} {
		if got, err := ParseAlgorithm(in); err != nil || got != want {
			t.Errorf("ParseAlgorithm(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseAlgorithm("blake3"); err == nil {
		t.Error("ParseAlgorithm(blake3) succeeded")
	}
}
