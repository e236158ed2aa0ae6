package gitserver

import (
	"bytes"
	"cmp"
	"crypto/subtle"
	"encoding/pem"
	"log"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"golang.org/x/crypto/ssh"

	"github.com/weir-gitops/weir/internal/devenv/gitserve"
)

// realm is the name the HTTP server gives in its authentication challenges.
const realm = "weir-test"

// Options configures a Server. The zero value serves plain HTTP without
// authentication and an SSH listener that accepts no key.
type Options struct {
	// Username and Password, when Username is set, make HTTP require basic auth.
	Username, Password string
	// BearerToken, when set, makes HTTP require "Authorization: Bearer <token>".
	// With basic auth also set, either one is accepted.
	BearerToken string
	// Accept, when set, makes HTTP require basic auth too and lets in the
	// username and password it accepts (besides Username and Password):
	// tokens another fake minted, such as a GitHub App's.
	Accept func(username, password string) bool
	// TLS serves HTTPS with a self-signed certificate; see CAPEM.
	TLS bool
	// AuthorizedKeys are the client public keys the SSH listener accepts.
	AuthorizedKeys []ssh.PublicKey
}

// Server serves a directory of bare repositories over HTTP(S) and SSH.
type Server struct {
	opts  Options
	git   string // absolute path of the git binary
	root  string // GIT_PROJECT_ROOT: the bare repositories live here
	home  string // HOME for every git process, so no user config leaks in
	http  *httptest.Server
	ssh   *sshServer
	caPEM []byte
	// uploadPacks counts POSTs to git-upload-pack over HTTP: the requests
	// that download objects, as opposed to ref advertisements.
	uploadPacks atomic.Int64
}

// UploadPacks returns how many object downloads (git-upload-pack POSTs)
// the HTTP listener has served; a ref advertisement alone does not count.
func (s *Server) UploadPacks() int64 { return s.uploadPacks.Load() }

// New starts a Server on 127.0.0.1 and stops it when the test ends.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("gitserver needs the git command line (apt-get install git): %v", err)
	}
	s := &Server{opts: opts, git: gitPath, root: t.TempDir(), home: t.TempDir()}

	s.http = httptest.NewUnstartedServer(s.httpHandler(t))
	s.http.Config.ErrorLog = log.New(testLogWriter{t}, "http server: ", 0)
	if opts.TLS {
		s.http.StartTLS()
		s.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.http.Certificate().Raw})
	} else {
		s.http.Start()
	}
	t.Cleanup(s.http.Close)

	s.ssh, err = startSSH(s.root, s.git, s.home, opts.AuthorizedKeys)
	if err != nil {
		t.Fatalf("start ssh server: %v", err)
	}
	t.Cleanup(s.ssh.close)
	return s
}

// HTTPURL is the HTTP(S) clone URL of repo, e.g. http://127.0.0.1:PORT/org/app.git.
func (s *Server) HTTPURL(repo string) string {
	return s.http.URL + "/" + strings.TrimPrefix(repo, "/")
}

// SSHURL is the SSH clone URL of repo, e.g. ssh://git@127.0.0.1:PORT/org/app.git.
func (s *Server) SSHURL(repo string) string {
	return "ssh://git@" + s.ssh.addr() + "/" + strings.TrimPrefix(repo, "/")
}

// CAPEM is the PEM certificate that signs the HTTPS server (nil without TLS),
// for tests that hand a custom CA to the client.
func (s *Server) CAPEM() []byte { return s.caPEM }

// HostKey is the SSH server's public host key.
func (s *Server) HostKey() ssh.PublicKey { return s.ssh.hostKey.PublicKey() }

// AuthorizeKey lets the SSH listener accept key from now on, in addition
// to Options.AuthorizedKeys: for keys made after the server started, such
// as those of an SSH agent a test sets up.
func (s *Server) AuthorizeKey(key ssh.PublicKey) { s.ssh.authorize(key) }

// KnownHosts is a known_hosts line for the SSH server:
// "[127.0.0.1]:PORT ssh-ed25519 AAAA...".
func (s *Server) KnownHosts() []byte { return s.ssh.knownHosts() }

// Dir is the directory on disk that holds the bare repositories.
func (s *Server) Dir() string { return s.root }

// InitRepo creates an empty bare repository whose default branch is main.
func (s *Server) InitRepo(t testing.TB, repo string) {
	t.Helper()
	rel := strings.TrimPrefix(repo, "/")
	if !filepath.IsLocal(rel) {
		t.Fatalf("init repository %q: path escapes the server root", repo)
	}
	cmd := exec.Command(s.git, "init", "--quiet", "--bare", "--initial-branch=main", filepath.Join(s.root, rel))
	cmd.Env = gitEnv(s.home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("init repository %q: %v: %s", repo, err, out)
	}
}

// Remote is how the server's own helpers reach repo: its HTTP(S) URL with the
// server's credentials and CA.
func (s *Server) Remote(repo string) Remote {
	r := Remote{URL: s.HTTPURL(repo), CABundle: s.caPEM}
	switch {
	case s.opts.Username != "":
		r.Auth = &githttp.BasicAuth{Username: s.opts.Username, Password: s.opts.Password}
	case s.opts.BearerToken != "":
		r.Auth = &githttp.TokenAuth{Token: s.opts.BearerToken}
	}
	return r
}

// httpHandler checks credentials, then hands the request to git http-backend
// (internal/devenv/gitserve). REMOTE_USER is always set: http-backend refuses pushes
// from anonymous users.
func (s *Server) httpHandler(t testing.TB) http.Handler {
	backend, err := gitserve.Handler(gitserve.Options{
		Root:       s.root,
		Home:       s.home,
		RemoteUser: cmp.Or(s.opts.Username, realm),
		Log:        testLogWriter{t},
	})
	if err != nil {
		t.Fatalf("git http-backend: %v", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			if s.opts.Username != "" || s.opts.Accept != nil {
				w.Header().Add("WWW-Authenticate", `Basic realm="`+realm+`"`)
			}
			if s.opts.BearerToken != "" {
				w.Header().Add("WWW-Authenticate", `Bearer realm="`+realm+`"`)
			}
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-upload-pack") {
			s.uploadPacks.Add(1)
		}
		backend.ServeHTTP(w, r)
	})
}

// authorized reports whether r carries the credentials Options asks for.
func (s *Server) authorized(r *http.Request) bool {
	if s.opts.Username == "" && s.opts.BearerToken == "" && s.opts.Accept == nil {
		return true
	}
	if user, pass, ok := r.BasicAuth(); ok {
		if s.opts.Accept != nil && s.opts.Accept(user, pass) {
			return true
		}
		return s.opts.Username != "" && equal(user, s.opts.Username) && equal(pass, s.opts.Password)
	}
	if token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.opts.BearerToken != "" {
		return equal(token, s.opts.BearerToken)
	}
	return false
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// gitEnv is the environment of every git process the server runs: no global
// or system config, and a HOME of its own.
func gitEnv(home string) []string { return gitserve.Env(home) }

// testLogWriter sends what git prints to the test log, shown on failure or -v.
type testLogWriter struct{ t testing.TB }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s", bytes.TrimRight(p, "\n"))
	return len(p), nil
}
