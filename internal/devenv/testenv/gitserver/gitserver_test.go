package gitserver_test

import (
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5/memfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/memory"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

func TestHTTPBasicAuthRoundTrip(t *testing.T) {
	srv := gitserver.New(t, gitserver.Options{Username: "git", Password: "s3cret"})
	srv.InitRepo(t, "org/app.git")
	auth := &githttp.BasicAuth{Username: "git", Password: "s3cret"}

	sha := gitserver.Push(t, gitserver.Remote{URL: srv.HTTPURL("org/app.git"), Auth: auth}, gitserver.Commit{
		Files: map[string]string{"deploy/app.yaml": "kind: ConfigMap\n"},
		Tag:   "v1.0.0",
	})

	repo, err := clone(srv.HTTPURL("org/app.git"), auth, nil)
	if err != nil {
		t.Fatalf("clone: %v", err)
	}
	assertHead(t, repo, sha)
	assertFile(t, repo, "deploy/app.yaml", "kind: ConfigMap\n")
	tag, err := repo.Tag("v1.0.0")
	if err != nil {
		t.Fatalf("tag v1.0.0: %v", err)
	}
	tagObj, err := repo.TagObject(tag.Hash())
	if err != nil {
		t.Fatalf("tag v1.0.0 is not annotated: %v", err)
	}
	if tagObj.Target.String() != sha {
		t.Errorf("tag v1.0.0 points at %s, want %s", tagObj.Target, sha)
	}
}

func TestSameCommitsSameSHA(t *testing.T) {
	var shas []string
	for range 2 {
		srv := gitserver.New(t, gitserver.Options{})
		srv.InitRepo(t, "app.git")
		srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"a.txt": "a"}})
		shas = append(shas, srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"b.txt": "b"}, Message: "second"}))
	}
	if shas[0] != shas[1] {
		t.Errorf("same commits on two servers got SHAs %s and %s", shas[0], shas[1])
	}
}

func TestHTTPRefusesBadCredentials(t *testing.T) {
	srv := gitserver.New(t, gitserver.Options{Username: "git", Password: "s3cret", BearerToken: "t0ken"})
	srv.InitRepo(t, "app.git")
	srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"a": "a"}})

	tests := []struct {
		name    string
		auth    transport.AuthMethod
		wantErr bool
	}{
		{name: "right password", auth: &githttp.BasicAuth{Username: "git", Password: "s3cret"}},
		{name: "right token", auth: &githttp.TokenAuth{Token: "t0ken"}},
		{name: "wrong password", auth: &githttp.BasicAuth{Username: "git", Password: "wrong"}, wantErr: true},
		{name: "wrong user", auth: &githttp.BasicAuth{Username: "nobody", Password: "s3cret"}, wantErr: true},
		{name: "wrong token", auth: &githttp.TokenAuth{Token: "wrong"}, wantErr: true},
		{name: "anonymous", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := clone(srv.HTTPURL("app.git"), tt.auth, nil)
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("clone: %v", err)
				}
				return
			}
			if !errors.Is(err, transport.ErrAuthenticationRequired) {
				t.Fatalf("clone error = %v, want %v", err, transport.ErrAuthenticationRequired)
			}
		})
	}

	t.Run("challenge", func(t *testing.T) {
		resp, err := http.Get(srv.HTTPURL("app.git") + "/info/refs?service=git-upload-pack")
		if err != nil {
			t.Fatalf("get info/refs: %v", err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("status = %d, want 401", resp.StatusCode)
		}
		if got := strings.Join(resp.Header.Values("WWW-Authenticate"), ", "); !strings.Contains(got, "Basic ") {
			t.Errorf("WWW-Authenticate = %q, want a Basic challenge", got)
		}
	})
}

func TestHTTPSCustomCA(t *testing.T) {
	srv := gitserver.New(t, gitserver.Options{TLS: true})
	srv.InitRepo(t, "app.git")
	sha := srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"a.txt": "a"}})
	if !strings.HasPrefix(srv.HTTPURL("app.git"), "https://127.0.0.1:") {
		t.Fatalf("HTTPURL = %s, want https://127.0.0.1:PORT/...", srv.HTTPURL("app.git"))
	}

	repo, err := clone(srv.HTTPURL("app.git"), nil, srv.CAPEM())
	if err != nil {
		t.Fatalf("clone with CA: %v", err)
	}
	assertHead(t, repo, sha)

	if _, err := clone(srv.HTTPURL("app.git"), nil, nil); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("clone without CA: error = %v, want a certificate error", err)
	}
}

func TestSSH(t *testing.T) {
	key := gitserver.GenerateClientKey(t)
	srv := gitserver.New(t, gitserver.Options{AuthorizedKeys: []ssh.PublicKey{key.PublicKey}})
	srv.InitRepo(t, "org/app.git")
	first := srv.Commit(t, "org/app.git", gitserver.Commit{Files: map[string]string{"a.txt": "a"}})
	auth := sshAuth(t, key.PrivateKeyPEM, srv.KnownHosts())

	repo, err := clone(srv.SSHURL("org/app.git"), auth, nil)
	if err != nil {
		t.Fatalf("clone over ssh: %v", err)
	}
	assertHead(t, repo, first)
	assertFile(t, repo, "a.txt", "a")

	second := gitserver.Push(t, gitserver.Remote{URL: srv.SSHURL("org/app.git"), Auth: auth}, gitserver.Commit{
		Files: map[string]string{"b.txt": "b"},
	})
	repo, err = clone(srv.HTTPURL("org/app.git"), nil, nil)
	if err != nil {
		t.Fatalf("clone over http after ssh push: %v", err)
	}
	assertHead(t, repo, second)
	assertFile(t, repo, "a.txt", "a")
	assertFile(t, repo, "b.txt", "b")
}

func TestSSHRefusals(t *testing.T) {
	key := gitserver.GenerateClientKey(t)
	srv := gitserver.New(t, gitserver.Options{AuthorizedKeys: []ssh.PublicKey{key.PublicKey}})
	srv.InitRepo(t, "app.git")
	srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"a.txt": "a"}})

	otherKey := gitserver.GenerateClientKey(t)
	wrongHost := knownhosts.Line([]string{knownhosts.Normalize(hostPort(srv))}, otherKey.PublicKey)

	tests := []struct {
		name       string
		key        []byte
		knownHosts []byte
		repo       string
		wantErr    string
	}{
		{name: "authorized key", key: key.PrivateKeyPEM, knownHosts: srv.KnownHosts(), repo: "app.git"},
		{name: "unknown client key", key: otherKey.PrivateKeyPEM, knownHosts: srv.KnownHosts(), repo: "app.git", wantErr: "unable to authenticate"},
		{name: "wrong host key", key: key.PrivateKeyPEM, knownHosts: []byte(wrongHost), repo: "app.git", wantErr: "key mismatch"},
		{name: "path escaping the root", key: key.PrivateKeyPEM, knownHosts: srv.KnownHosts(), repo: "../../etc", wantErr: "escapes the server root"},
		{name: "missing repository", key: key.PrivateKeyPEM, knownHosts: srv.KnownHosts(), repo: "missing.git", wantErr: "repository not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := clone(srv.SSHURL(tt.repo), sshAuth(t, tt.key, tt.knownHosts), nil)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("clone: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("clone error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}

	t.Run("other commands", func(t *testing.T) {
		signer, err := ssh.ParsePrivateKey(key.PrivateKeyPEM)
		if err != nil {
			t.Fatalf("parse key: %v", err)
		}
		client, err := ssh.Dial("tcp", hostPort(srv), &ssh.ClientConfig{
			User:            "git",
			Auth:            []ssh.AuthMethod{ssh.PublicKeys(signer)},
			HostKeyCallback: ssh.FixedHostKey(srv.HostKey()),
		})
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		defer client.Close()
		session, err := client.NewSession()
		if err != nil {
			t.Fatalf("new session: %v", err)
		}
		defer session.Close()
		out, err := session.CombinedOutput("cat /etc/passwd")
		var exitErr *ssh.ExitError
		if !errors.As(err, &exitErr) || exitErr.ExitStatus() != 128 || !strings.Contains(string(out), "not allowed") {
			t.Fatalf("exec cat: err = %v, output %q; want exit status 128 and 'not allowed'", err, out)
		}
	})
}

func TestGitCLIOverHTTP(t *testing.T) {
	// The git CLI speaks protocol v2 and, past http.postBuffer, sends chunked
	// request bodies; both must reach git http-backend intact.
	srv := gitserver.New(t, gitserver.Options{Username: "git", Password: "s3cret"})
	srv.InitRepo(t, "app.git")
	srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"a.txt": "a"}})
	url := strings.Replace(srv.HTTPURL("app.git"), "http://", "http://git:s3cret@", 1)
	dir := t.TempDir()

	runGit(t, dir, "-c", "protocol.version=2", "clone", "--quiet", url, "work")
	work := filepath.Join(dir, "work")
	big := strings.Repeat("0123456789abcdef", 64<<10) // 1 MiB, well past the 1 KiB buffer below
	if err := os.WriteFile(filepath.Join(work, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatalf("write big.txt: %v", err)
	}
	runGit(t, work, "add", "big.txt")
	runGit(t, work, "-c", "user.name=t", "-c", "user.email=t@weir.invalid", "commit", "--quiet", "-m", "big")
	runGit(t, work, "-c", "http.postBuffer=1024", "push", "--quiet", "origin", "main")
	sha := strings.TrimSpace(runGit(t, work, "rev-parse", "HEAD"))

	repo, err := clone(srv.HTTPURL("app.git"), &githttp.BasicAuth{Username: "git", Password: "s3cret"}, nil)
	if err != nil {
		t.Fatalf("clone: %v", err)
	}
	assertHead(t, repo, sha)
	assertFile(t, repo, "big.txt", big)
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func clone(url string, auth transport.AuthMethod, ca []byte) (*git.Repository, error) {
	return git.Clone(memory.NewStorage(), memfs.New(), &git.CloneOptions{URL: url, Auth: auth, CABundle: ca})
}

func sshAuth(t *testing.T, privateKeyPEM, knownHostsLine []byte) *gitssh.PublicKeys {
	t.Helper()
	auth, err := gitssh.NewPublicKeys("git", privateKeyPEM, "")
	if err != nil {
		t.Fatalf("load client key: %v", err)
	}
	path := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(path, knownHostsLine, 0o600); err != nil {
		t.Fatalf("write known_hosts: %v", err)
	}
	auth.HostKeyCallback, err = knownhosts.New(path)
	if err != nil {
		t.Fatalf("parse known_hosts: %v", err)
	}
	return auth
}

// hostPort is the SSH server's 127.0.0.1:PORT, taken from its clone URL.
func hostPort(srv *gitserver.Server) string {
	rest := strings.TrimPrefix(srv.SSHURL(""), "ssh://git@")
	return strings.TrimSuffix(rest, "/")
}

// assertHead checks that repo's main branch points at want.
func assertHead(t *testing.T, repo *git.Repository, want string) {
	t.Helper()
	const branch = "main"
	ref, err := repo.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		t.Fatalf("branch %s: %v", branch, err)
	}
	if got := ref.Hash().String(); got != want {
		t.Errorf("branch %s at %s, want %s", branch, got, want)
	}
}

func assertFile(t *testing.T, repo *git.Repository, path, want string) {
	t.Helper()
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatalf("worktree: %v", err)
	}
	f, err := wt.Filesystem.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	got, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	if string(got) != want {
		t.Errorf("%s = %q, want %q", path, got, want)
	}
}
