package git

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io/fs"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

// testAuthor is the author of every commit the tests make through Checkout.
var testAuthor = Signature{Name: "weir bootstrap", Email: "bootstrap@weir.invalid"}

// writeFixture is a server with basic auth over HTTP and one authorized
// SSH key.
func writeFixture(t *testing.T) (*gitserver.Server, gitserver.ClientKey) {
	t.Helper()
	key := gitserver.GenerateClientKey(t)
	srv := gitserver.New(t, gitserver.Options{Username: "git", Password: secretPassword, AuthorizedKeys: []ssh.PublicKey{key.PublicKey}})
	return srv, key
}

func mustOpen(t *testing.T, url string, auth *Auth, branch string) *Checkout {
	t.Helper()
	c, err := OpenBranch(testContext(t), url, auth, branch)
	if err != nil {
		t.Fatalf("OpenBranch(%s): %v", branch, err)
	}
	return c
}

func mustCommit(t *testing.T, c *Checkout, files map[string]string) string {
	t.Helper()
	for p, content := range files {
		if err := c.WriteFile(p, []byte(content)); err != nil {
			t.Fatalf("WriteFile(%s): %v", p, err)
		}
	}
	h, err := c.Commit("update", testAuthor, nil)
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	return h
}

// parentsOf returns the parents of a commit of the checkout.
func parentsOf(t *testing.T, c *Checkout, hash string) []string {
	t.Helper()
	obj, err := c.repo.CommitObject(plumbing.NewHash(hash))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range obj.ParentHashes {
		out = append(out, p.String())
	}
	return out
}

func TestCheckoutCommitAndPush(t *testing.T) {
	srv, _ := writeFixture(t)
	srv.InitRepo(t, "empty.git")
	srv.InitRepo(t, "app.git")
	appMain := srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"README.md": "readme", "clusters/prod/app.yaml": "v1"}})

	tests := []struct {
		name     string
		repo     string
		branch   string
		wantHead string // "" for an empty Checkout
		wantRead map[string]string
	}{
		{name: "empty repository", repo: "empty.git", branch: "main"},
		{name: "missing branch", repo: "app.git", branch: "bootstrap"},
		{name: "existing branch", repo: "app.git", branch: "main", wantHead: appMain,
			wantRead: map[string]string{"README.md": "readme", "clusters/prod/app.yaml": "v1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := srv.HTTPURL(tt.repo)
			auth := mustAuth(t, u, basicSecret())
			c := mustOpen(t, u, auth, tt.branch)
			if c.Head() != tt.wantHead {
				t.Fatalf("Head() = %q, want %q", c.Head(), tt.wantHead)
			}
			for p, want := range tt.wantRead {
				if got, err := c.ReadFile(p); err != nil || string(got) != want {
					t.Errorf("ReadFile(%s) = %q, %v; want %q", p, got, err, want)
				}
			}
			if _, err := c.ReadFile("clusters/prod/flux-system/gotk-sync.yaml"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("ReadFile(missing) error = %v, want fs.ErrNotExist", err)
			}
			if err := c.Push(testContext(t)); tt.wantHead == "" && !errors.Is(err, ErrInvalidConfig) || tt.wantHead != "" && err != nil {
				t.Errorf("Push before Commit = %v", err)
			}

			hash := mustCommit(t, c, map[string]string{
				"clusters/prod/flux-system/gotk-components.yaml": "components",
				"clusters/prod/flux-system/gotk-sync.yaml":       "sync",
			})
			wantParents := []string(nil)
			if tt.wantHead != "" {
				wantParents = []string{tt.wantHead}
			}
			if got := parentsOf(t, c, hash); !slices.Equal(got, wantParents) {
				t.Errorf("parents of the new commit = %v, want %v", got, wantParents)
			}
			if c.Head() != hash {
				t.Errorf("Head() after Commit = %q, want %q", c.Head(), hash)
			}
			if err := c.Push(testContext(t)); err != nil {
				t.Fatalf("Push: %v", err)
			}
			if err := c.Push(testContext(t)); err != nil {
				t.Errorf("second Push (up to date) = %v, want nil", err)
			}

			remote := NewClient().Remote(testContext(t), u, auth)
			rev, err := remote.Resolve(Reference{Branch: tt.branch})
			if err != nil || rev != tt.branch+"@sha1:"+hash {
				t.Errorf("Resolve = %q, %v; want %s@sha1:%s", rev, err, tt.branch, hash)
			}
			dir := t.TempDir()
			if _, err := remote.Clone(dir, CloneOptions{Reference: Reference{Branch: tt.branch}}); err != nil {
				t.Fatalf("Clone: %v", err)
			}
			if got := readFile(t, dir, "clusters/prod/flux-system/gotk-sync.yaml"); got != "sync" {
				t.Errorf("cloned gotk-sync.yaml = %q", got)
			}

			again := mustOpen(t, u, auth, tt.branch)
			if again.Head() != hash {
				t.Errorf("reopened Head() = %q, want %q", again.Head(), hash)
			}
			names, err := again.ListDir("clusters/prod/flux-system")
			if err != nil || !slices.Equal(names, []string{"gotk-components.yaml", "gotk-sync.yaml"}) {
				t.Errorf("ListDir = %v, %v", names, err)
			}
		})
	}
}

func TestCommitStaging(t *testing.T) {
	srv, _ := writeFixture(t)
	srv.InitRepo(t, "app.git")
	head := srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"a/b.yaml": "same", ".gitignore": "*.secret.yaml\n"}})
	u := srv.HTTPURL("app.git")
	c := mustOpen(t, u, mustAuth(t, u, basicSecret()), "main")

	if err := c.WriteFile("a/b.yaml", []byte("same")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Commit("no-op", testAuthor, nil); !errors.Is(err, ErrNoStagedFiles) {
		t.Errorf("Commit of identical content = %v, want ErrNoStagedFiles", err)
	}
	if c.Head() != head {
		t.Errorf("Head() = %q after a refused commit, want %q", c.Head(), head)
	}

	empty := mustOpen(t, u, mustAuth(t, u, basicSecret()), "other")
	if _, err := empty.Commit("nothing", testAuthor, nil); !errors.Is(err, ErrNoStagedFiles) {
		t.Errorf("Commit of an empty worktree = %v, want ErrNoStagedFiles", err)
	}
	if _, err := c.Commit("anonymous", Signature{}, nil); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Commit without author = %v, want ErrInvalidConfig", err)
	}

	// A written file is committed even when .gitignore matches it.
	hash := mustCommit(t, c, map[string]string{"a/app.secret.yaml": "sealed"})
	tree, err := c.repo.CommitObject(plumbing.NewHash(hash))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.File("a/app.secret.yaml"); err != nil {
		t.Errorf("ignored but written file not committed: %v", err)
	}
}

func TestPushNonFastForward(t *testing.T) {
	srv, _ := writeFixture(t)
	srv.InitRepo(t, "app.git")
	srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"a.yaml": "base"}})
	u := srv.HTTPURL("app.git")
	auth := mustAuth(t, u, basicSecret())

	tests := []struct {
		name   string
		branch string
	}{
		{name: "branch moved", branch: "main"},
		{name: "branch created meanwhile", branch: "new"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := mustOpen(t, u, auth, tt.branch)
			second := mustOpen(t, u, auth, tt.branch)
			if first.Head() != second.Head() {
				t.Fatalf("heads differ: %s, %s", first.Head(), second.Head())
			}
			mustCommit(t, first, map[string]string{"a.yaml": "first"})
			mustCommit(t, second, map[string]string{"a.yaml": "second"})
			if err := first.Push(testContext(t)); err != nil {
				t.Fatalf("first Push: %v", err)
			}
			err := second.Push(testContext(t))
			if !errors.Is(err, ErrNonFastForward) {
				t.Fatalf("second Push = %v, want ErrNonFastForward", err)
			}
			again := mustOpen(t, u, auth, tt.branch)
			if got, _ := again.ReadFile("a.yaml"); string(got) != "first" {
				t.Errorf("remote a.yaml = %q, want the first push's", got)
			}
		})
	}
}

func TestCheckoutSSH(t *testing.T) {
	srv, key := writeFixture(t)
	srv.InitRepo(t, "app.git")
	u := srv.SSHURL("app.git")
	hostPort := strings.TrimSuffix(strings.TrimPrefix(srv.SSHURL(""), "ssh://git@"), "/")
	otherHostKey := gitserver.GenerateClientKey(t).PublicKey

	agentAuth := func(t *testing.T) *Auth {
		socket := serveAgent(t, srv)
		a, err := NewAgentAuth(u, srv.KnownHosts(), socket)
		if err != nil {
			t.Fatalf("NewAgentAuth: %v", err)
		}
		t.Cleanup(func() { _ = a.Close() })
		if s := a.String(); !strings.Contains(s, "ssh agent") || strings.Contains(s, "PRIVATE") {
			t.Errorf("String() = %q", s)
		}
		return a
	}

	tests := []struct {
		name    string
		auth    func(t *testing.T) *Auth
		wantErr error
	}{
		{name: "identity and known_hosts", auth: func(t *testing.T) *Auth {
			return mustAuth(t, u, map[string][]byte{"identity": key.PrivateKeyPEM, "known_hosts": srv.KnownHosts()})
		}},
		{name: "agent", auth: agentAuth},
		{name: "wrong host key", wantErr: ErrHostKey, auth: func(t *testing.T) *Auth {
			kh := []byte(knownhosts.Line([]string{knownhosts.Normalize(hostPort)}, otherHostKey) + "\n")
			return mustAuth(t, u, map[string][]byte{"identity": key.PrivateKeyPEM, "known_hosts": kh})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			auth := tt.auth(t)
			c, err := OpenBranch(testContext(t), u, auth, "main")
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("OpenBranch = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("OpenBranch: %v", err)
			}
			hash := mustCommit(t, c, map[string]string{"by/" + strings.ReplaceAll(tt.name, " ", "-"): "x"})
			if err := c.Push(testContext(t)); err != nil {
				t.Fatalf("Push: %v", err)
			}
			rev, err := NewClient().Remote(testContext(t), u, auth).Resolve(Reference{Branch: "main"})
			if err != nil || rev != "main@sha1:"+hash {
				t.Errorf("Resolve = %q, %v; want main@sha1:%s", rev, err, hash)
			}
		})
	}
}

// serveAgent runs an SSH agent holding a fresh key on a unix socket in a
// temporary directory, authorises the key on srv, and returns the socket.
func serveAgent(t *testing.T, srv *gitserver.Server) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: priv, Comment: "weir-test"}); err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	srv.AuthorizeKey(signer.PublicKey())

	socket := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { _ = agent.ServeAgent(keyring, c) })
		}
	})
	return socket
}

func TestNewAgentAuthErrors(t *testing.T) {
	srv, _ := writeFixture(t)
	u := srv.SSHURL("app.git")
	emptyAgent := filepath.Join(t.TempDir(), "empty.sock")
	ln, err := net.Listen("unix", emptyAgent)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _ = agent.ServeAgent(agent.NewKeyring(), c); c.Close() }()
		}
	}()

	tests := []struct {
		name       string
		url        string
		knownHosts []byte
		socket     string
		want       error
		wantMsg    string
	}{
		{name: "https URL", url: srv.HTTPURL("app.git"), knownHosts: srv.KnownHosts(), socket: emptyAgent, want: ErrInvalidConfig, wantMsg: "needs an ssh URL"},
		{name: "no socket", url: u, knownHosts: srv.KnownHosts(), want: ErrInvalidConfig, wantMsg: "SSH_AUTH_SOCK"},
		{name: "no known_hosts", url: u, socket: emptyAgent, want: ErrInvalidConfig, wantMsg: "known_hosts"},
		{name: "agent not running", url: u, knownHosts: srv.KnownHosts(), socket: filepath.Join(t.TempDir(), "none.sock"), want: ErrAuth, wantMsg: "connect to ssh agent"},
		{name: "agent without keys", url: u, knownHosts: srv.KnownHosts(), socket: emptyAgent, want: ErrAuth, wantMsg: "holds no keys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewAgentAuth(tt.url, tt.knownHosts, tt.socket)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("NewAgentAuth = %v, want %v containing %q", err, tt.want, tt.wantMsg)
			}
		})
	}
}

func TestCheckoutPaths(t *testing.T) {
	srv, _ := writeFixture(t)
	srv.InitRepo(t, "app.git")
	u := srv.HTTPURL("app.git")
	c := mustOpen(t, u, mustAuth(t, u, basicSecret()), "main")

	for _, p := range []string{"../x", "/abs", "a/../../x", "..", "", ".", ".git/config", "a/.GIT/x", `a\b`} {
		if err := c.WriteFile(p, []byte("x")); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("WriteFile(%q) = %v, want ErrInvalidConfig", p, err)
		}
		if _, err := c.ReadFile(p); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("ReadFile(%q) = %v, want ErrInvalidConfig", p, err)
		}
	}
	for _, p := range []string{"../x", "/abs", ".git"} {
		if _, err := c.ListDir(p); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("ListDir(%q) = %v, want ErrInvalidConfig", p, err)
		}
	}

	// Inside the root, unclean paths are fine and mean their clean form.
	if err := c.WriteFile("a/./b/../c.yaml", []byte("c")); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteFile("a/sub/d.yaml", []byte("d")); err != nil {
		t.Fatal(err)
	}
	if got, err := c.ReadFile("a/c.yaml"); err != nil || string(got) != "c" {
		t.Errorf("ReadFile(a/c.yaml) = %q, %v", got, err)
	}
	for dir, want := range map[string][]string{"a": {"c.yaml"}, "a/": {"c.yaml"}, "": nil, ".": nil, "missing": nil} {
		if got, err := c.ListDir(dir); err != nil || !slices.Equal(got, want) {
			t.Errorf("ListDir(%q) = %v, %v; want %v", dir, got, err, want)
		}
	}
}

func TestOpenBranchErrors(t *testing.T) {
	srv, _ := writeFixture(t)
	srv.InitRepo(t, "app.git")
	u := srv.HTTPURL("app.git")
	const wrong = "wrong-SECRET-password"
	hanging := hangingListener(t)

	tests := []struct {
		name    string
		url     string
		secret  map[string][]byte
		branch  string
		timeout time.Duration
		want    error
	}{
		{name: "wrong password", url: u, secret: map[string][]byte{"username": []byte("git"), "password": []byte(wrong)}, branch: "main", want: ErrAuth},
		{name: "wrong password in URL", url: strings.Replace(u, "://", "://git:"+wrong+"@", 1), branch: "main", want: ErrAuth},
		{name: "anonymous", url: u, branch: "main", want: ErrAuth},
		{name: "no such repository", url: srv.HTTPURL("none.git"), secret: basicSecret(), branch: "main", want: ErrRepositoryNotFound},
		{name: "invalid branch", url: u, secret: basicSecret(), branch: "a..b", want: ErrInvalidConfig},
		{name: "full reference as branch", url: u, secret: basicSecret(), branch: "refs/heads/main", want: ErrInvalidConfig},
		{name: "http server never answers", url: "http://" + hanging + "/app.git", branch: "main", timeout: 300 * time.Millisecond, want: context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			start := time.Now()
			_, err := OpenBranch(ctx, tt.url, mustAuth(t, tt.url, tt.secret), tt.branch)
			if !errors.Is(err, tt.want) {
				t.Fatalf("OpenBranch = %v, want %v", err, tt.want)
			}
			if strings.Contains(err.Error(), wrong) || strings.Contains(err.Error(), secretPassword) {
				t.Errorf("error shows the password: %v", err)
			}
			if tt.timeout > 0 && time.Since(start) > tt.timeout+3*time.Second {
				t.Errorf("OpenBranch took %s with a %s timeout", time.Since(start), tt.timeout)
			}
		})
	}
}
