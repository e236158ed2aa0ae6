package git

import (
	"cmp"
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/util"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

// commitClock makes every test commit distinct and reproducible in order.
var commitClock atomic.Int64

// change is one commit pushed by push, with the references to point at it.
type change struct {
	// Parent is the branch (short name) the commit goes on top of; a new
	// root commit when the branch does not exist.
	Parent string
	Files  map[string]string
	// Message defaults to "commit".
	Message string
	// SignKey signs the commit with PGP; Signer with anything else.
	SignKey *openpgp.Entity
	Signer  gogit.Signer
	// Refs are full reference names to create or move to the commit
	// (refs/heads/x, refs/pull/1/head, refs/tags/lightweight).
	Refs []string
	// AnnotatedTags are created on the commit, signed with TagSignKey if set.
	AnnotatedTags []string
	TagSignKey    *openpgp.Entity
}

// push writes c to the remote with go-git and returns the commit SHA.
func push(t testing.TB, r gitserver.Remote, c change) string {
	t.Helper()
	repo, err := gogit.Init(memory.NewStorage(), memfs.New())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{r.URL}}); err != nil {
		t.Fatal(err)
	}
	err = repo.Fetch(&gogit.FetchOptions{
		RefSpecs: []config.RefSpec{"+refs/heads/*:refs/remotes/origin/*"},
		Auth:     r.Auth, CABundle: r.CABundle,
	})
	if err != nil && !errors.Is(err, gogit.NoErrAlreadyUpToDate) && !errors.Is(err, transport.ErrEmptyRemoteRepository) {
		t.Fatalf("fetch: %v", err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	var parents []plumbing.Hash
	if c.Parent != "" {
		if ref, err := repo.Reference(plumbing.NewRemoteReferenceName("origin", c.Parent), true); err == nil {
			if err := wt.Checkout(&gogit.CheckoutOptions{Hash: ref.Hash()}); err != nil {
				t.Fatalf("checkout %s: %v", c.Parent, err)
			}
			parents = []plumbing.Hash{ref.Hash()}
		}
	}
	for p, content := range c.Files {
		if err := util.WriteFile(wt.Filesystem, p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := wt.AddWithOptions(&gogit.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	sig := &object.Signature{Name: "weir test", Email: "test@weir.invalid",
		When: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(commitClock.Add(1)) * time.Minute)}
	hash, err := wt.Commit(cmp.Or(c.Message, "commit"), &gogit.CommitOptions{
		Author: sig, Committer: sig, Parents: parents, AllowEmptyCommits: true,
		SignKey: c.SignKey, Signer: c.Signer,
	})
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	var specs []config.RefSpec
	for _, ref := range c.Refs {
		if err := repo.Storer.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(ref), hash)); err != nil {
			t.Fatal(err)
		}
		specs = append(specs, config.RefSpec("+"+ref+":"+ref))
	}
	for _, tag := range c.AnnotatedTags {
		if _, err := repo.CreateTag(tag, hash, &gogit.CreateTagOptions{Tagger: sig, Message: "release " + tag, SignKey: c.TagSignKey}); err != nil {
			t.Fatalf("tag %s: %v", tag, err)
		}
		specs = append(specs, config.RefSpec("+refs/tags/"+tag+":refs/tags/"+tag))
	}
	err = repo.Push(&gogit.PushOptions{RemoteName: "origin", RefSpecs: specs, Auth: r.Auth, CABundle: r.CABundle})
	if err != nil && !errors.Is(err, gogit.NoErrAlreadyUpToDate) {
		t.Fatalf("push: %v", err)
	}
	return hash.String()
}

// readFile returns the content of a checked-out file, or "" if missing.
func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runGit runs the git CLI isolated from the user's configuration.
func runGit(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@weir.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@weir.invalid")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustAuth(t testing.TB, url string, data map[string][]byte) *Auth {
	t.Helper()
	a, err := NewAuth(url, data)
	if err != nil {
		t.Fatalf("NewAuth: %v", err)
	}
	return a
}

func basicSecret() map[string][]byte {
	return map[string][]byte{"username": []byte("git"), "password": []byte(secretPassword)}
}

// socks5Server is a minimal SOCKS5 proxy (no authentication, CONNECT only)
// on 127.0.0.1; count is the number of connections it relayed.
func socks5Server(t *testing.T) (addr string, count *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	count = &atomic.Int32{}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { relaySOCKS5(c, count) })
		}
	})
	return ln.Addr().String(), count
}

func relaySOCKS5(c net.Conn, count *atomic.Int32) {
	defer c.Close()
	buf := make([]byte, 262)
	// Greeting: version, methods; answer "no authentication".
	if _, err := io.ReadFull(c, buf[:2]); err != nil || buf[0] != 5 {
		return
	}
	if _, err := io.ReadFull(c, buf[:buf[1]]); err != nil {
		return
	}
	if _, err := c.Write([]byte{5, 0}); err != nil {
		return
	}
	// Request: version, CONNECT, reserved, address type, address, port.
	if _, err := io.ReadFull(c, buf[:4]); err != nil || buf[1] != 1 {
		return
	}
	var host string
	switch buf[3] {
	case 1:
		if _, err := io.ReadFull(c, buf[:4]); err != nil {
			return
		}
		host = net.IP(buf[:4]).String()
	case 3:
		if _, err := io.ReadFull(c, buf[:1]); err != nil {
			return
		}
		n := int(buf[0])
		if _, err := io.ReadFull(c, buf[:n]); err != nil {
			return
		}
		host = string(buf[:n])
	default:
		return
	}
	if _, err := io.ReadFull(c, buf[:2]); err != nil {
		return
	}
	port := int(buf[0])<<8 | int(buf[1])
	up, err := net.Dial("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		_, _ = c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0})
		return
	}
	defer up.Close()
	count.Add(1)
	if _, err := c.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0}); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
}

// treeFile is one entry for pushTree.
type treeFile struct {
	mode    filemode.FileMode
	content string // file content or symlink target
}

// pushTree writes a commit whose tree is exactly files (built object by
// object, so that it can hold what a worktree could not, such as a .git
// directory) and points branch at it.
func pushTree(t *testing.T, r gitserver.Remote, branch string, files map[string]treeFile) {
	t.Helper()
	st := memory.NewStorage()
	repo, err := gogit.Init(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	store := func(o interface {
		Encode(plumbing.EncodedObject) error
	}) plumbing.Hash {
		obj := st.NewEncodedObject()
		if err := o.Encode(obj); err != nil {
			t.Fatal(err)
		}
		h, err := st.SetEncodedObject(obj)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	var build func(prefix string) plumbing.Hash
	build = func(prefix string) plumbing.Hash {
		children := map[string]object.TreeEntry{}
		for p, f := range files {
			rest, ok := strings.CutPrefix(p, prefix)
			if !ok {
				continue
			}
			name, _, isDir := strings.Cut(rest, "/")
			if isDir {
				children[name] = object.TreeEntry{Name: name, Mode: filemode.Dir}
				continue
			}
			blob := st.NewEncodedObject()
			blob.SetType(plumbing.BlobObject)
			w, _ := blob.Writer()
			_, _ = w.Write([]byte(f.content))
			_ = w.Close()
			h, err := st.SetEncodedObject(blob)
			if err != nil {
				t.Fatal(err)
			}
			children[name] = object.TreeEntry{Name: name, Mode: f.mode, Hash: h}
		}
		tree := &object.Tree{}
		for _, name := range slices.Sorted(maps.Keys(children)) {
			e := children[name]
			if e.Mode == filemode.Dir {
				e.Hash = build(prefix + name + "/")
			}
			tree.Entries = append(tree.Entries, e)
		}
		// git sorts tree entries as if directories had a trailing slash.
		slices.SortFunc(tree.Entries, func(a, b object.TreeEntry) int {
			key := func(e object.TreeEntry) string {
				if e.Mode == filemode.Dir {
					return e.Name + "/"
				}
				return e.Name
			}
			return strings.Compare(key(a), key(b))
		})
		return store(tree)
	}
	sig := object.Signature{Name: "weir test", Email: "test@weir.invalid", When: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	commit := store(&object.Commit{Author: sig, Committer: sig, Message: "tree", TreeHash: build("")})
	ref := plumbing.NewBranchReferenceName(branch)
	if err := st.SetReference(plumbing.NewHashReference(ref, commit)); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{r.URL}}); err != nil {
		t.Fatal(err)
	}
	err = repo.Push(&gogit.PushOptions{RemoteName: "origin", RefSpecs: []config.RefSpec{config.RefSpec("+" + ref + ":" + ref)}, Auth: r.Auth})
	if err != nil && !errors.Is(err, gogit.NoErrAlreadyUpToDate) {
		t.Fatalf("push: %v", err)
	}
}
