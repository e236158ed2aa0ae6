package git

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

// fixture is a repository with branches, lightweight and annotated tags
// (semver and not), and a pull request ref.
type fixture struct {
	srv                     *gitserver.Server
	url                     string
	c1, c2, c3, c4, feature string
	pr                      string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	srv := gitserver.New(t, gitserver.Options{Username: "git", Password: secretPassword, BearerToken: secretToken})
	srv.InitRepo(t, "app.git")
	r := srv.Remote("app.git")
	f := fixture{srv: srv, url: srv.HTTPURL("app.git")}
	f.c1 = push(t, r, change{Parent: "main", Message: "first\n\nbody",
		Files: map[string]string{"deploy/app.yaml": "v1", "deployment/other.yaml": "other", "README.md": "readme"},
		Refs:  []string{"refs/heads/main"}, AnnotatedTags: []string{"v1.0.0"}})
	f.c2 = push(t, r, change{Parent: "main", Files: map[string]string{"deploy/app.yaml": "v2"},
		Refs: []string{"refs/heads/main", "refs/tags/1.2.0"}})
	f.c3 = push(t, r, change{Parent: "main", Files: map[string]string{"deploy/app.yaml": "v3"},
		Refs: []string{"refs/heads/main", "refs/tags/latest"}, AnnotatedTags: []string{"v1.10.0"}})
	f.c4 = push(t, r, change{Parent: "main", Files: map[string]string{"deploy/app.yaml": "v4"},
		Refs: []string{"refs/heads/main", "refs/tags/v2.0.0-rc.1"}})
	f.feature = push(t, r, change{Parent: "main", Files: map[string]string{"feature.txt": "feature"},
		Refs: []string{"refs/heads/feature/x"}})
	f.pr = push(t, r, change{Parent: "main", Files: map[string]string{"pr.txt": "pull request"},
		Refs: []string{"refs/pull/1/head"}})
	return f
}

func TestResolveAndClone(t *testing.T) {
	f := newFixture(t)
	auth := mustAuth(t, f.url, basicSecret())
	client := NewClient()

	tests := []struct {
		name     string
		ref      Reference
		want     string // revision
		wantRef  string // Commit.Reference
		wantFile [2]string
		wantTag  string // annotated tag name on the Commit
		shallow  bool
	}{
		{name: "branch", ref: Reference{Branch: "main"}, want: "main@sha1:" + f.c4, wantRef: "refs/heads/main",
			wantFile: [2]string{"deploy/app.yaml", "v4"}, shallow: true},
		{name: "branch with slash", ref: Reference{Branch: "feature/x"}, want: "feature/x@sha1:" + f.feature, wantRef: "refs/heads/feature/x",
			wantFile: [2]string{"feature.txt", "feature"}, shallow: true},
		{name: "annotated tag peeled", ref: Reference{Tag: "v1.0.0"}, want: "v1.0.0@sha1:" + f.c1, wantRef: "refs/tags/v1.0.0",
			wantFile: [2]string{"deploy/app.yaml", "v1"}, wantTag: "v1.0.0", shallow: true},
		{name: "lightweight tag", ref: Reference{Tag: "1.2.0", Branch: "main"}, want: "1.2.0@sha1:" + f.c2, wantRef: "refs/tags/1.2.0",
			wantFile: [2]string{"deploy/app.yaml", "v2"}, shallow: true},
		{name: "semver highest of several", ref: Reference{SemVer: ">=1.0.0", Tag: "v1.0.0"}, want: "v1.10.0@sha1:" + f.c3, wantRef: "refs/tags/v1.10.0",
			wantFile: [2]string{"deploy/app.yaml", "v3"}, wantTag: "v1.10.0", shallow: true},
		{name: "semver lightweight", ref: Reference{SemVer: "~1.2"}, want: "1.2.0@sha1:" + f.c2, wantRef: "refs/tags/1.2.0",
			wantFile: [2]string{"deploy/app.yaml", "v2"}, shallow: true},
		{name: "semver prerelease", ref: Reference{SemVer: ">=2.0.0-0"}, want: "v2.0.0-rc.1@sha1:" + f.c4, wantRef: "refs/tags/v2.0.0-rc.1",
			wantFile: [2]string{"deploy/app.yaml", "v4"}, shallow: true},
		{name: "name pull request", ref: Reference{Name: "refs/pull/1/head", Branch: "main"}, want: "refs/pull/1/head@sha1:" + f.pr, wantRef: "refs/pull/1/head",
			wantFile: [2]string{"pr.txt", "pull request"}, shallow: true},
		{name: "name branch keeps prefix", ref: Reference{Name: "refs/heads/main"}, want: "refs/heads/main@sha1:" + f.c4, wantRef: "refs/heads/main",
			wantFile: [2]string{"deploy/app.yaml", "v4"}, shallow: true},
		{name: "name annotated tag", ref: Reference{Name: "refs/tags/v1.0.0"}, want: "refs/tags/v1.0.0@sha1:" + f.c1, wantRef: "refs/tags/v1.0.0",
			wantFile: [2]string{"deploy/app.yaml", "v1"}, wantTag: "v1.0.0", shallow: true},
		{name: "commit only", ref: Reference{Commit: f.c2, Tag: "v1.0.0"}, want: "sha1:" + f.c2,
			wantFile: [2]string{"deploy/app.yaml", "v2"}},
		{name: "branch and commit", ref: Reference{Branch: "main", Commit: f.c2}, want: "main@sha1:" + f.c2, wantRef: "refs/heads/main",
			wantFile: [2]string{"deploy/app.yaml", "v2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			remote := client.Remote(ctx, f.url, auth)
			rev, err := remote.Resolve(tt.ref)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if rev != tt.want {
				t.Errorf("Resolve = %q, want %q", rev, tt.want)
			}

			dir := t.TempDir()
			c, err := remote.Clone(dir, CloneOptions{Reference: tt.ref})
			if err != nil {
				t.Fatalf("Clone: %v", err)
			}
			if c.Revision != rev {
				t.Errorf("Clone revision %q differs from Resolve %q", c.Revision, rev)
			}
			if c.Reference != tt.wantRef {
				t.Errorf("Reference = %q, want %q", c.Reference, tt.wantRef)
			}
			if !strings.HasSuffix(tt.want, c.Hash) || c.Author.Name != "weir test" || c.Committer.Email != "test@weir.invalid" {
				t.Errorf("commit = %+v, want hash from %s and the test author", c, tt.want)
			}
			if len(c.Encoded) == 0 || len(c.Signature) != 0 {
				t.Errorf("Encoded has %d bytes, Signature %d; want an unsigned encoded commit", len(c.Encoded), len(c.Signature))
			}
			if got := readFile(t, dir, tt.wantFile[0]); got != tt.wantFile[1] {
				t.Errorf("%s = %q, want %q", tt.wantFile[0], got, tt.wantFile[1])
			}
			switch {
			case tt.wantTag == "" && c.Tag != nil:
				t.Errorf("Tag = %+v, want none", c.Tag)
			case tt.wantTag != "" && (c.Tag == nil || c.Tag.Name != tt.wantTag || c.Tag.Target != c.Hash || c.Tag.Message == ""):
				t.Errorf("Tag = %+v, want annotated tag %s on %s", c.Tag, tt.wantTag, c.Hash)
			}
			if got := isShallow(t, dir); got != tt.shallow {
				t.Errorf("shallow clone = %v, want %v", got, tt.shallow)
			}
		})
	}

	t.Run("short message", func(t *testing.T) {
		c, err := client.Remote(testContext(t), f.url, auth).Clone(t.TempDir(), CloneOptions{Reference: Reference{Commit: f.c1}})
		if err != nil {
			t.Fatal(err)
		}
		if c.ShortMessage() != "first" || c.Message != "first\n\nbody" {
			t.Errorf("message %q, short %q", c.Message, c.ShortMessage())
		}
	})
}

func isShallow(t *testing.T, dir string) bool {
	t.Helper()
	repo, err := gogit.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	shallow, err := repo.Storer.Shallow()
	if err != nil {
		t.Fatal(err)
	}
	return len(shallow) > 0
}

func TestRefNotFound(t *testing.T) {
	f := newFixture(t)
	auth := mustAuth(t, f.url, basicSecret())
	missing := strings.Repeat("ab", 20)
	tests := []struct {
		name         string
		ref          Reference
		wantRef      string
		resolveFinds bool // Resolve cannot see commits, only tips
	}{
		{name: "missing tag", ref: Reference{Tag: "v9.9.9"}, wantRef: "refs/tags/v9.9.9"},
		{name: "missing branch", ref: Reference{Branch: "nope"}, wantRef: "refs/heads/nope"},
		{name: "default master", ref: Reference{}, wantRef: "refs/heads/master"},
		{name: "missing name", ref: Reference{Name: "refs/pull/2/head"}, wantRef: "refs/pull/2/head"},
		{name: "no semver match", ref: Reference{SemVer: ">=5.0.0"}, wantRef: "semver >=5.0.0"},
		{name: "missing commit", ref: Reference{Commit: missing}, wantRef: "commit " + missing, resolveFinds: true},
		{name: "commit not on branch", ref: Reference{Branch: "main", Commit: newFixtureCommitOffMain(f)}, wantRef: "on refs/heads/main", resolveFinds: true},
		{name: "commit on missing branch", ref: Reference{Branch: "gone", Commit: f.c1}, wantRef: "refs/heads/gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			remote := NewClient().Remote(testContext(t), f.url, auth)
			_, err := remote.Resolve(tt.ref)
			switch {
			case tt.resolveFinds && err != nil:
				t.Errorf("Resolve: %v", err)
			case !tt.resolveFinds:
				assertRefNotFound(t, "Resolve", err, tt.wantRef)
			}
			_, err = remote.Clone(t.TempDir(), CloneOptions{Reference: tt.ref})
			assertRefNotFound(t, "Clone", err, tt.wantRef)
		})
	}
}

// newFixtureCommitOffMain is the pull request commit: reachable from
// refs/pull/1/head, not from main.
func newFixtureCommitOffMain(f fixture) string { return f.pr }

func assertRefNotFound(t *testing.T, op string, err error, wantRef string) {
	t.Helper()
	var rerr *RefNotFoundError
	if !errors.Is(err, ErrRefNotFound) || !errors.As(err, &rerr) || !strings.Contains(err.Error(), wantRef) {
		t.Errorf("%s error = %v, want ErrRefNotFound naming %q", op, err, wantRef)
	}
}

func TestEmptyRepository(t *testing.T) {
	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "empty.git")
	remote := NewClient().Remote(testContext(t), srv.HTTPURL("empty.git"), nil)
	_, err := remote.Resolve(Reference{Branch: "main"})
	assertRefNotFound(t, "Resolve", err, "refs/heads/main")
	if !strings.Contains(err.Error(), "empty") {
		t.Errorf("error %q does not say the repository is empty", err)
	}
	_, err = remote.Clone(t.TempDir(), CloneOptions{Reference: Reference{Branch: "main"}})
	assertRefNotFound(t, "Clone", err, "refs/heads/main")
}

// TestCommitExactFetch covers servers that allow any reachable SHA-1 in a
// want: the commit alone is fetched at depth 1.
func TestCommitExactFetch(t *testing.T) {
	f := newFixture(t)
	runGit(t, filepath.Join(f.srv.Dir(), "app.git"), "config", "uploadpack.allowReachableSHA1InWant", "true")
	remote := NewClient().Remote(testContext(t), f.url, mustAuth(t, f.url, basicSecret()))
	dir := t.TempDir()
	c, err := remote.Clone(dir, CloneOptions{Reference: Reference{Commit: f.c2}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Revision != "sha1:"+f.c2 || readFile(t, dir, "deploy/app.yaml") != "v2" {
		t.Errorf("revision %q, file %q", c.Revision, readFile(t, dir, "deploy/app.yaml"))
	}
	if !isShallow(t, dir) {
		t.Errorf("exact-SHA fetch was not shallow")
	}
}

// countingProxy sits between client and server and counts what passes.
type countingProxy struct {
	advertisements, packs atomic.Int32
	url                   string
}

func newCountingProxy(t *testing.T, target string) *countingProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	c := &countingProxy{}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/info/refs"):
			c.advertisements.Add(1)
		case strings.HasSuffix(r.URL.Path, "/git-upload-pack"):
			c.packs.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c.url = srv.URL
	return c
}

func TestResolveMakesOneRequest(t *testing.T) {
	f := newFixture(t)
	proxy := newCountingProxy(t, f.url)
	repoURL := proxy.url + "/app.git"
	remote := NewClient().Remote(testContext(t), repoURL, mustAuth(t, repoURL, basicSecret()))

	for _, ref := range []Reference{{Branch: "main"}, {Tag: "v1.0.0"}, {SemVer: "1.x"}, {Name: "refs/pull/1/head"}} {
		proxy.advertisements.Store(0)
		proxy.packs.Store(0)
		if _, err := remote.Resolve(ref); err != nil {
			t.Fatalf("Resolve(%+v): %v", ref, err)
		}
		if a, p := proxy.advertisements.Load(), proxy.packs.Load(); a != 1 || p != 0 {
			t.Errorf("Resolve(%+v) made %d ref advertisements and %d upload-pack requests, want 1 and 0", ref, a, p)
		}
	}

	proxy.advertisements.Store(0)
	if _, err := remote.Clone(t.TempDir(), CloneOptions{Reference: Reference{Branch: "main"}}); err != nil {
		t.Fatal(err)
	}
	if a, p := proxy.advertisements.Load(), proxy.packs.Load(); a != 1 || p < 1 {
		t.Errorf("Clone made %d advertisements and %d upload-pack requests, want 1 and at least 1", a, p)
	}
}

func TestHTTPAuth(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name    string
		secret  map[string][]byte
		wantErr error
	}{
		{name: "basic", secret: basicSecret()},
		{name: "bearer token", secret: map[string][]byte{"bearerToken": []byte(secretToken)}},
		{name: "wrong password", secret: map[string][]byte{"username": []byte("git"), "password": []byte("wrong-SECRET")}, wantErr: ErrAuth},
		{name: "wrong token", secret: map[string][]byte{"bearerToken": []byte("wrong-SECRET")}, wantErr: ErrAuth},
		{name: "anonymous", wantErr: ErrAuth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			remote := NewClient().Remote(testContext(t), f.url, mustAuth(t, f.url, tt.secret))
			_, rerr := remote.Resolve(Reference{Branch: "main"})
			_, cerr := remote.Clone(t.TempDir(), CloneOptions{Reference: Reference{Branch: "main"}})
			for op, err := range map[string]error{"Resolve": rerr, "Clone": cerr} {
				if tt.wantErr == nil {
					if err != nil {
						t.Errorf("%s: %v", op, err)
					}
					continue
				}
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("%s error = %v, want %v", op, err, tt.wantErr)
				}
				if err != nil {
					assertNoSecret(t, err.Error())
				}
			}
		})
	}

	t.Run("credentials in the URL", func(t *testing.T) {
		u := strings.Replace(f.url, "://", "://git:"+secretPassword+"@", 1)
		a := mustAuth(t, u, nil)
		assertNoSecret(t, a.String())
		remote := NewClient().Remote(testContext(t), u, a)
		dir := t.TempDir()
		if _, err := remote.Clone(dir, CloneOptions{Reference: Reference{Branch: "main"}}); err != nil {
			t.Fatalf("Clone: %v", err)
		}
		if cfg := readFile(t, dir, ".git/config"); !strings.Contains(cfg, "[remote \"origin\"]") || strings.Contains(cfg, secretPassword) {
			t.Errorf(".git/config = %q, want the origin URL without the password", cfg)
		}
		_, err := remote.Resolve(Reference{Tag: "missing"})
		if err == nil {
			t.Fatal("Resolve of a missing tag succeeded")
		}
		assertNoSecret(t, err.Error())
	})

	t.Run("repository not found", func(t *testing.T) {
		u := f.srv.HTTPURL("missing.git")
		_, err := NewClient().Remote(testContext(t), u, mustAuth(t, u, basicSecret())).Resolve(Reference{Branch: "main"})
		if !errors.Is(err, ErrRepositoryNotFound) {
			t.Errorf("error = %v, want ErrRepositoryNotFound", err)
		}
	})

	t.Run("auth for another repository", func(t *testing.T) {
		_, err := NewClient().Remote(testContext(t), f.srv.HTTPURL("other.git"), mustAuth(t, f.url, basicSecret())).Resolve(Reference{})
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("error = %v, want ErrInvalidConfig", err)
		}
	})
}

func TestHTTPSCustomCA(t *testing.T) {
	srv := gitserver.New(t, gitserver.Options{TLS: true})
	srv.InitRepo(t, "app.git")
	sha := push(t, srv.Remote("app.git"), change{Parent: "main", Files: map[string]string{"a.txt": "a"}, Refs: []string{"refs/heads/main"}})
	u := srv.HTTPURL("app.git")

	for _, key := range []string{"ca.crt", "caFile"} {
		t.Run(key, func(t *testing.T) {
			remote := NewClient().Remote(testContext(t), u, mustAuth(t, u, map[string][]byte{key: srv.CAPEM()}))
			rev, err := remote.Resolve(Reference{Branch: "main"})
			if err != nil || rev != "main@sha1:"+sha {
				t.Fatalf("Resolve = %q, %v", rev, err)
			}
			dir := t.TempDir()
			if _, err := remote.Clone(dir, CloneOptions{Reference: Reference{Branch: "main"}}); err != nil || readFile(t, dir, "a.txt") != "a" {
				t.Fatalf("Clone: %v", err)
			}
		})
	}
	t.Run("without CA", func(t *testing.T) {
		remote := NewClient().Remote(testContext(t), u, nil)
		if _, err := remote.Resolve(Reference{Branch: "main"}); !errors.Is(err, ErrTLS) {
			t.Errorf("Resolve error = %v, want ErrTLS", err)
		}
		if _, err := remote.Clone(t.TempDir(), CloneOptions{Reference: Reference{Branch: "main"}}); !errors.Is(err, ErrTLS) {
			t.Errorf("Clone error = %v, want ErrTLS", err)
		}
	})
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := ln.Addr().String()
	ln.Close()

	key := gitserver.GenerateClientKey(t)
	sshSecret := func(addr string) map[string][]byte {
		return map[string][]byte{
			"identity":    key.PrivateKeyPEM,
			"known_hosts": []byte(knownhosts.Line([]string{knownhosts.Normalize(addr)}, key.PublicKey) + "\n"),
		}
	}
	hanging := hangingListener(t)

	tests := []struct {
		name    string
		url     string
		secret  map[string][]byte
		timeout time.Duration
	}{
		{name: "http refused", url: "http://" + closedAddr + "/app.git"},
		{name: "ssh refused", url: "ssh://git@" + closedAddr + "/app.git", secret: sshSecret(closedAddr)},
		{name: "http server never answers", url: "http://" + hanging + "/app.git", timeout: 500 * time.Millisecond},
		{name: "ssh server never answers", url: "ssh://git@" + hanging + "/app.git", secret: sshSecret(hanging), timeout: 500 * time.Millisecond},
		{name: "dns failure", url: "https://weir-test.invalid/app.git"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			remote := NewClient().Remote(ctx, tt.url, mustAuth(t, tt.url, tt.secret))
			start := time.Now()
			_, err := remote.Resolve(Reference{Branch: "main"})
			if !errors.Is(err, ErrUnreachable) {
				t.Errorf("Resolve error = %v, want ErrUnreachable", err)
			}
			if tt.timeout > 0 {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Resolve error = %v, want context.DeadlineExceeded in the chain", err)
				}
				if elapsed := time.Since(start); elapsed > tt.timeout+3*time.Second {
					t.Errorf("Resolve took %s with a %s timeout", elapsed, tt.timeout)
				}
				return
			}
			if _, err := remote.Clone(t.TempDir(), CloneOptions{Reference: Reference{Branch: "main"}}); !errors.Is(err, ErrUnreachable) {
				t.Errorf("Clone error = %v, want ErrUnreachable", err)
			}
		})
	}
}

// hangingListener accepts connections and never writes a byte.
func hangingListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

func sshFixture(t *testing.T) (srv *gitserver.Server, key gitserver.ClientKey, sha string) {
	t.Helper()
	key = gitserver.GenerateClientKey(t)
	srv = gitserver.New(t, gitserver.Options{AuthorizedKeys: []ssh.PublicKey{key.PublicKey}})
	srv.InitRepo(t, "org/app.git")
	sha = push(t, srv.Remote("org/app.git"), change{Parent: "main", Files: map[string]string{"a.txt": "over ssh"},
		Refs: []string{"refs/heads/main"}, AnnotatedTags: []string{"v1.0.0"}})
	return srv, key, sha
}

func TestSSH(t *testing.T) {
	srv, key, sha := sshFixture(t)
	u := srv.SSHURL("org/app.git")
	hostPort := strings.TrimSuffix(strings.TrimPrefix(srv.SSHURL(""), "ssh://git@"), "/")
	other := gitserver.GenerateClientKey(t)
	secret := func(identity, kh []byte) map[string][]byte {
		return map[string][]byte{"identity": identity, "known_hosts": kh}
	}

	t.Run("identity and known_hosts", func(t *testing.T) {
		remote := NewClient().Remote(testContext(t), u, mustAuth(t, u, secret(key.PrivateKeyPEM, srv.KnownHosts())))
		for _, ref := range []Reference{{Branch: "main"}, {Tag: "v1.0.0"}} {
			rev, err := remote.Resolve(ref)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			dir := t.TempDir()
			c, err := remote.Clone(dir, CloneOptions{Reference: ref})
			if err != nil {
				t.Fatalf("Clone: %v", err)
			}
			if c.Revision != rev || c.Hash != sha || readFile(t, dir, "a.txt") != "over ssh" {
				t.Errorf("Clone revision %q, Resolve %q, hash %s want %s", c.Revision, rev, c.Hash, sha)
			}
		}
	})

	t.Run("encrypted identity", func(t *testing.T) {
		encKey := encryptedKey(t, secretPassword)
		signer, err := ssh.ParsePrivateKeyWithPassphrase(encKey, []byte(secretPassword))
		if err != nil {
			t.Fatal(err)
		}
		srv := gitserver.New(t, gitserver.Options{AuthorizedKeys: []ssh.PublicKey{signer.PublicKey()}})
		srv.InitRepo(t, "app.git")
		push(t, srv.Remote("app.git"), change{Parent: "main", Refs: []string{"refs/heads/main"}})
		u := srv.SSHURL("app.git")
		data := secret(encKey, srv.KnownHosts())
		data["password"] = []byte(secretPassword)
		if _, err := NewClient().Remote(testContext(t), u, mustAuth(t, u, data)).Resolve(Reference{Branch: "main"}); err != nil {
			t.Fatalf("Resolve: %v", err)
		}
	})

	refusals := []struct {
		name        string
		identity    []byte
		knownHosts  []byte
		want        error
		wantUnknown bool
	}{
		{name: "unknown host", identity: key.PrivateKeyPEM, knownHosts: []byte(knownhosts.Line([]string{"git.example.com"}, srv.HostKey()) + "\n"), want: ErrHostKey, wantUnknown: true},
		{name: "host key mismatch", identity: key.PrivateKeyPEM, knownHosts: []byte(knownhosts.Line([]string{knownhosts.Normalize(hostPort)}, other.PublicKey) + "\n"), want: ErrHostKey},
		{name: "wrong identity", identity: other.PrivateKeyPEM, knownHosts: srv.KnownHosts(), want: ErrAuth},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			remote := NewClient().Remote(testContext(t), u, mustAuth(t, u, secret(tt.identity, tt.knownHosts)))
			_, rerr := remote.Resolve(Reference{Branch: "main"})
			_, cerr := remote.Clone(t.TempDir(), CloneOptions{Reference: Reference{Branch: "main"}})
			for op, err := range map[string]error{"Resolve": rerr, "Clone": cerr} {
				if !errors.Is(err, tt.want) {
					t.Errorf("%s error = %v, want %v", op, err, tt.want)
					continue
				}
				var herr *HostKeyError
				if errors.Is(tt.want, ErrHostKey) && (!errors.As(err, &herr) || herr.Unknown != tt.wantUnknown) {
					t.Errorf("%s error = %v, want HostKeyError with Unknown=%v", op, err, tt.wantUnknown)
				}
			}
		})
	}

	t.Run("user ssh files are ignored", func(t *testing.T) {
		home := t.TempDir()
		sshDir := filepath.Join(home, ".ssh")
		if err := os.MkdirAll(sshDir, 0o700); err != nil {
			t.Fatal(err)
		}
		// A config that would send the connection elsewhere, and a
		// known_hosts that would trust the server.
		config := "Host 127.0.0.1\n  Hostname 192.0.2.1\n  Port 1\n"
		if err := os.WriteFile(filepath.Join(sshDir, "config"), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sshDir, "known_hosts"), srv.KnownHosts(), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("HOME", home)
		t.Setenv("SSH_KNOWN_HOSTS", filepath.Join(sshDir, "known_hosts"))

		ok := NewClient().Remote(testContext(t), u, mustAuth(t, u, secret(key.PrivateKeyPEM, srv.KnownHosts())))
		if _, err := ok.Resolve(Reference{Branch: "main"}); err != nil {
			t.Errorf("Resolve with ~/.ssh/config redirecting elsewhere: %v", err)
		}
		unknown := []byte(knownhosts.Line([]string{"git.example.com"}, srv.HostKey()) + "\n")
		refused := NewClient().Remote(testContext(t), u, mustAuth(t, u, secret(key.PrivateKeyPEM, unknown)))
		if _, err := refused.Resolve(Reference{Branch: "main"}); !errors.Is(err, ErrHostKey) {
			t.Errorf("Resolve with the host only in ~/.ssh/known_hosts: error = %v, want ErrHostKey", err)
		}
	})

	t.Run("http proxy refused for ssh", func(t *testing.T) {
		a := mustAuth(t, u, secret(key.PrivateKeyPEM, srv.KnownHosts()))
		var err error
		if a.Proxy, err = NewProxy(map[string][]byte{"address": []byte("http://127.0.0.1:3128")}); err != nil {
			t.Fatal(err)
		}
		if _, err := NewClient().Remote(testContext(t), u, a).Resolve(Reference{Branch: "main"}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("error = %v, want ErrInvalidConfig", err)
		}
	})
}

func TestSparseCheckout(t *testing.T) {
	f := newFixture(t)
	remote := NewClient().Remote(testContext(t), f.url, mustAuth(t, f.url, basicSecret()))

	dir := t.TempDir()
	c, err := remote.Clone(dir, CloneOptions{Reference: Reference{Branch: "main"}, SparseCheckout: []string{"deploy"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Revision != "main@sha1:"+f.c4 {
		t.Errorf("revision %q", c.Revision)
	}
	if got := readFile(t, dir, "deploy/app.yaml"); got != "v4" {
		t.Errorf("deploy/app.yaml = %q, want v4", got)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != ".git,deploy" {
		t.Errorf("worktree has %q, want only .git and deploy (not deployment/ or README.md)", names)
	}

	_, err = remote.Clone(t.TempDir(), CloneOptions{Reference: Reference{Branch: "main"}, SparseCheckout: []string{"missing"}})
	if !errors.Is(err, ErrPathNotFound) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("error = %v, want ErrPathNotFound naming the directory", err)
	}
}

func TestSubmodules(t *testing.T) {
	srv := gitserver.New(t, gitserver.Options{Username: "git", Password: secretPassword})
	srv.InitRepo(t, "lib.git")
	srv.InitRepo(t, "other-host-lib.git")
	srv.InitRepo(t, "parent.git")
	libSHA := push(t, srv.Remote("lib.git"), change{Parent: "main", Files: map[string]string{"lib.txt": "library"}, Refs: []string{"refs/heads/main"}})
	push(t, srv.Remote("other-host-lib.git"), change{Parent: "main", Files: map[string]string{"x.txt": "x"}, Refs: []string{"refs/heads/main"}})
	// A second commit so that the recorded one is not the tip.
	push(t, srv.Remote("lib.git"), change{Parent: "main", Files: map[string]string{"lib.txt": "newer"}, Refs: []string{"refs/heads/main"}})

	withCreds := func(u string) string { return strings.Replace(u, "://", "://git:"+secretPassword+"@", 1) }
	work := t.TempDir()
	runGit(t, work, "init", "-q", "-b", "main")
	runGit(t, work, "submodule", "add", "-q", withCreds(srv.HTTPURL("lib.git")), "vendor/lib")
	runGit(t, filepath.Join(work, "vendor/lib"), "checkout", "-q", libSHA)
	runGit(t, work, "config", "-f", ".gitmodules", "submodule.vendor/lib.url", "../lib.git")
	runGit(t, work, "add", ".gitmodules", "vendor/lib")
	runGit(t, work, "commit", "-q", "-m", "add lib")
	runGit(t, work, "push", "-q", withCreds(srv.HTTPURL("parent.git")), "main")
	u := srv.HTTPURL("parent.git")
	remote := NewClient().Remote(testContext(t), u, mustAuth(t, u, basicSecret()))

	t.Run("recursive", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := remote.Clone(dir, CloneOptions{Reference: Reference{Branch: "main"}, RecurseSubmodules: true}); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, dir, "vendor/lib/lib.txt"); got != "library" {
			t.Errorf("vendor/lib/lib.txt = %q, want the recorded commit's %q", got, "library")
		}
	})
	t.Run("not recursive", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := remote.Clone(dir, CloneOptions{Reference: Reference{Branch: "main"}}); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, dir, "vendor/lib/lib.txt"); got != "" {
			t.Errorf("submodule checked out without RecurseSubmodules")
		}
	})
	t.Run("credentials stay on the repository host", func(t *testing.T) {
		// localhost is the same server under another name: the Secret's
		// credentials must not follow, so the server refuses the fetch.
		other := strings.Replace(srv.HTTPURL("other-host-lib.git"), "127.0.0.1", "localhost", 1)
		runGit(t, work, "config", "-f", ".gitmodules", "submodule.vendor/lib.url", other)
		runGit(t, work, "commit", "-q", "-am", "point lib elsewhere")
		runGit(t, work, "push", "-q", withCreds(srv.HTTPURL("parent.git")), "main")
		_, err := remote.Clone(t.TempDir(), CloneOptions{Reference: Reference{Branch: "main"}, RecurseSubmodules: true})
		if !errors.Is(err, ErrAuth) {
			t.Errorf("error = %v, want ErrAuth from the credential-less submodule fetch", err)
		}
	})
	t.Run("local submodule URLs are refused", func(t *testing.T) {
		runGit(t, work, "config", "-f", ".gitmodules", "submodule.vendor/lib.url", "/etc")
		runGit(t, work, "commit", "-q", "-am", "point lib at the disk")
		runGit(t, work, "push", "-q", withCreds(srv.HTTPURL("parent.git")), "main")
		_, err := remote.Clone(t.TempDir(), CloneOptions{Reference: Reference{Branch: "main"}, RecurseSubmodules: true})
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("error = %v, want ErrInvalidConfig", err)
		}
	})
}

func TestHTTPProxy(t *testing.T) {
	f := newFixture(t)
	var proxied atomic.Int32
	var badAuth atomic.Int32
	fwd := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.Out.URL = r.In.URL // absolute-form request: forward as asked
		r.Out.Header.Del("Proxy-Authorization")
	}}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := parseProxyAuth(r); !ok || user != "proxy-user" || pass != secretPassword {
			badAuth.Add(1)
			w.Header().Set("Proxy-Authenticate", `Basic realm="test"`)
			http.Error(w, "proxy auth required", http.StatusProxyAuthRequired)
			return
		}
		proxied.Add(1)
		fwd.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)

	auth := mustAuth(t, f.url, basicSecret())
	var err error
	auth.Proxy, err = NewProxy(map[string][]byte{"address": []byte(proxy.URL), "username": []byte("proxy-user"), "password": []byte(secretPassword)})
	if err != nil {
		t.Fatal(err)
	}
	remote := NewClient().Remote(testContext(t), f.url, auth)
	rev, err := remote.Resolve(Reference{Branch: "main"})
	if err != nil || rev != "main@sha1:"+f.c4 {
		t.Fatalf("Resolve through proxy = %q, %v", rev, err)
	}
	dir := t.TempDir()
	if _, err := remote.Clone(dir, CloneOptions{Reference: Reference{Branch: "main"}}); err != nil {
		t.Fatalf("Clone through proxy: %v", err)
	}
	if proxied.Load() < 2 || badAuth.Load() != 0 {
		t.Errorf("proxy saw %d authenticated and %d unauthenticated requests, want >=2 and 0", proxied.Load(), badAuth.Load())
	}
}

func parseProxyAuth(r *http.Request) (string, string, bool) {
	h := r.Header.Get("Proxy-Authorization")
	if h == "" {
		return "", "", false
	}
	req := &http.Request{Header: http.Header{"Authorization": []string{h}}}
	return req.BasicAuth()
}

func TestSSHThroughSOCKS5(t *testing.T) {
	srv, key, sha := sshFixture(t)
	u := srv.SSHURL("org/app.git")
	socks, count := socks5Server(t)
	auth := mustAuth(t, u, map[string][]byte{"identity": key.PrivateKeyPEM, "known_hosts": srv.KnownHosts()})
	var err error
	if auth.Proxy, err = NewProxy(map[string][]byte{"address": []byte("socks5://" + socks)}); err != nil {
		t.Fatal(err)
	}
	rev, err := NewClient().Remote(testContext(t), u, auth).Resolve(Reference{Branch: "main"})
	if err != nil || rev != "main@sha1:"+sha {
		t.Fatalf("Resolve = %q, %v", rev, err)
	}
	if count.Load() != 1 {
		t.Errorf("socks5 proxy relayed %d connections, want 1", count.Load())
	}
}

func TestHTTPSClientCertificate(t *testing.T) {
	f := newFixture(t)
	clientCert, clientKey := selfSignedPEM(t)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(clientCert) {
		t.Fatal("client certificate does not parse")
	}
	target, err := url.Parse(f.srv.HTTPURL(""))
	if err != nil {
		t.Fatal(err)
	}
	// A TLS front that requires a client certificate, forwarding to the
	// plain HTTP Git server.
	front := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host}))
	front.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	front.Config.ErrorLog = log.New(io.Discard, "", 0)
	front.StartTLS()
	t.Cleanup(front.Close)
	serverCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: front.Certificate().Raw})
	u := front.URL + "/app.git"

	secret := basicSecret()
	secret["ca.crt"] = serverCA
	secret["tls.crt"], secret["tls.key"] = clientCert, clientKey
	remote := NewClient().Remote(testContext(t), u, mustAuth(t, u, secret))
	if rev, err := remote.Resolve(Reference{Branch: "main"}); err != nil || rev != "main@sha1:"+f.c4 {
		t.Fatalf("Resolve with client certificate = %q, %v", rev, err)
	}
	if _, err := remote.Clone(t.TempDir(), CloneOptions{Reference: Reference{Branch: "main"}}); err != nil {
		t.Fatalf("Clone with client certificate: %v", err)
	}

	delete(secret, "tls.crt")
	delete(secret, "tls.key")
	_, err = NewClient().Remote(testContext(t), u, mustAuth(t, u, secret)).Resolve(Reference{Branch: "main"})
	if !errors.Is(err, ErrTLS) {
		t.Errorf("Resolve without client certificate: error = %v, want ErrTLS", err)
	}
}

func TestSSHRepositoryNotFound(t *testing.T) {
	srv, key, _ := sshFixture(t)
	u := srv.SSHURL("org/missing.git")
	remote := NewClient().Remote(testContext(t), u, mustAuth(t, u, map[string][]byte{"identity": key.PrivateKeyPEM, "known_hosts": srv.KnownHosts()}))
	if _, err := remote.Resolve(Reference{Branch: "main"}); !errors.Is(err, ErrRepositoryNotFound) {
		t.Errorf("error = %v, want ErrRepositoryNotFound", err)
	}
}

func TestWorktreeContent(t *testing.T) {
	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "app.git")
	r := srv.Remote("app.git")
	u := srv.HTTPURL("app.git")
	pushTree(t, r, "modes", map[string]treeFile{
		"bin/run.sh":        {mode: filemode.Executable, content: "#!/bin/sh\n"},
		"config/app.yaml":   {mode: filemode.Regular, content: "a: 1\n"},
		"config/link.yaml":  {mode: filemode.Symlink, content: "app.yaml"},
		"escape":            {mode: filemode.Symlink, content: "../../../etc/passwd"},
		"deep/a/b/c/d.yaml": {mode: filemode.Regular, content: "deep\n"},
	})
	remote := NewClient().Remote(testContext(t), u, nil)

	t.Run("modes and symlinks", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := remote.Clone(dir, CloneOptions{Reference: Reference{Branch: "modes"}}); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(filepath.Join(dir, "bin/run.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
			t.Errorf("bin/run.sh: %v, mode %v; want executable", err, fi.Mode())
		}
		if fi, err := os.Stat(filepath.Join(dir, "config/app.yaml")); err != nil || fi.Mode().Perm()&0o111 != 0 {
			t.Errorf("config/app.yaml: %v, mode %v; want not executable", err, fi.Mode())
		}
		for name, want := range map[string]string{"config/link.yaml": "app.yaml", "escape": "../../../etc/passwd"} {
			if target, err := os.Readlink(filepath.Join(dir, name)); err != nil || target != want {
				t.Errorf("%s: readlink = %q, %v; want a symlink to %q", name, target, err, want)
			}
		}
		if readFile(t, dir, "deep/a/b/c/d.yaml") != "deep\n" {
			t.Errorf("deep file missing")
		}
	})

	t.Run("not empty", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "stale"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := remote.Clone(dir, CloneOptions{Reference: Reference{Branch: "modes"}}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("error = %v, want ErrInvalidConfig for a non-empty directory", err)
		}
	})

	for name, files := range map[string]map[string]treeFile{
		"dot-git": {".git/hooks/post-checkout": {mode: filemode.Executable, content: "#!/bin/sh\n"}},
		"dot-GIT": {"sub/.GIT/config": {mode: filemode.Regular, content: "[core]\n"}},
		"dotdot":  {"../escape": {mode: filemode.Regular, content: "x"}},
	} {
		t.Run("unsafe path "+name, func(t *testing.T) {
			pushTree(t, r, "unsafe-"+name, files)
			outer := t.TempDir()
			dir := filepath.Join(outer, "checkout")
			_, err := remote.Clone(dir, CloneOptions{Reference: Reference{Branch: "unsafe-" + name}})
			// go-git's tree walker refuses these before writeTree's own
			// check would.
			if err == nil || !strings.Contains(err.Error(), "path") {
				t.Errorf("error = %v, want the unsafe path refused", err)
			}
			if _, err := os.Stat(filepath.Join(outer, "escape")); err == nil {
				t.Errorf("a file was written outside the checkout")
			}
		})
	}
}
