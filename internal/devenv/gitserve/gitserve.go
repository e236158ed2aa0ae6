package gitserve

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Options configures Handler and Start.
type Options struct {
	// Root is the directory that holds the bare repositories; a request for
	// /org/app.git is served from Root/org/app.git.
	Root string
	// Home is HOME for every git process (default: Root/.home), so no user
	// configuration applies.
	Home string
	// RemoteUser is the name git http-backend records for pushes: it refuses
	// pushes from anonymous users. Default "weir".
	RemoteUser string
	// Log receives what git prints on stderr and the CGI host's errors;
	// discarded when nil.
	Log io.Writer
	// OnPush, when set, is called after each push to a repository has been
	// answered, with the repository's path relative to Root ("fleet.git").
	OnPush func(repo string)
}

// Handler returns an http.Handler that serves Root's bare repositories
// through git http-backend, without authentication.
func Handler(opts Options) (http.Handler, error) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("serving Git needs the git command line: %w", err)
	}
	if opts.Home == "" {
		opts.Home = filepath.Join(opts.Root, ".home")
	}
	if err := os.MkdirAll(opts.Home, 0o700); err != nil {
		return nil, fmt.Errorf("creating git home: %w", err)
	}
	logs := cmp.Or[io.Writer](opts.Log, io.Discard)
	backend := &cgi.Handler{
		Path: gitPath,
		Args: []string{"http-backend"},
		Dir:  opts.Root,
		Env: append(Env(opts.Home),
			"GIT_PROJECT_ROOT="+opts.Root,
			"GIT_HTTP_EXPORT_ALL=1",
			"REMOTE_USER="+cmp.Or(opts.RemoteUser, "weir"),
		),
		Stderr: logs,
		Logger: log.New(logs, "git http-backend: ", 0),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Go's CGI host refuses chunked bodies, which the git CLI sends for
		// large pushes; buffering gives the backend a Content-Length instead.
		if r.ContentLength < 0 {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, fmt.Sprintf("read request body: %v", err), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			r.TransferEncoding = nil
		}
		backend.ServeHTTP(w, r)
		if repo, ok := strings.CutSuffix(r.URL.Path, "/git-receive-pack"); ok && r.Method == http.MethodPost && opts.OnPush != nil {
			opts.OnPush(strings.TrimPrefix(repo, "/"))
		}
	}), nil
}

// Env is the environment of every git process the server runs: PATH, a
// HOME of its own, and no global or system config.
func Env(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_CONFIG_NOSYSTEM=1",
	}
}

// Server is a Handler listening on 127.0.0.1.
type Server struct {
	root string
	url  string
	http *http.Server
	done chan struct{}
}

// Start serves opts.Root on a free port of 127.0.0.1 until Close.
func Start(opts Options) (*Server, error) {
	h, err := Handler(opts)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for Git: %w", err)
	}
	s := &Server{
		root: opts.Root,
		url:  "http://" + l.Addr().String(),
		http: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          log.New(cmp.Or[io.Writer](opts.Log, io.Discard), "git server: ", 0),
		},
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		_ = s.http.Serve(l)
	}()
	return s, nil
}

// URL is the clone URL of repo, e.g. http://127.0.0.1:PORT/fleet.git.
func (s *Server) URL(repo string) string { return s.url + "/" + strings.TrimPrefix(repo, "/") }

// Close stops listening, ends open connections and waits for the server.
func (s *Server) Close() error {
	err := s.http.Close()
	<-s.done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// InitBare creates an empty bare repository at Root/repo whose default
// branch is main.
func InitBare(root, repo string) error {
	rel := strings.TrimPrefix(repo, "/")
	if !filepath.IsLocal(rel) {
		return fmt.Errorf("init repository %q: path escapes the server root", repo)
	}
	home := filepath.Join(root, ".home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("creating git home: %w", err)
	}
	cmd := exec.Command("git", "init", "--quiet", "--bare", "--initial-branch=main", filepath.Join(root, rel))
	cmd.Env = Env(home)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("init repository %q: %w: %s", repo, err, bytes.TrimSpace(out))
	}
	return nil
}
