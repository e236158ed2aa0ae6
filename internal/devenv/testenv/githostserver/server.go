package githostserver

import (
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Kind is the API a Server speaks.
type Kind string

// The APIs.
const (
	GitHub Kind = "github"
	Gitea  Kind = "gitea"
	GitLab Kind = "gitlab"
	// BitbucketServer is Bitbucket Server (Data Center)'s REST API 1.0.
	BitbucketServer Kind = "bitbucket-server"
)

// Options shape a Server.
type Options struct {
	Kind Kind
	// Token is the credential accepted, besides the installation tokens
	// App minted.
	Token string
	// App, for GitHub, is the GitHub App whose JWT the App endpoints
	// accept.
	App *App
	// User is the token's user, the owner of personal repositories
	// ("me" when empty).
	User string
	// Groups are the organizations (GitLab groups) that exist, and Teams
	// the teams (GitLab: groups) that can be given access.
	Groups, Teams []string
	// Git gives the clone addresses of a repository ("owner/name"); by
	// default https://HOST/owner/name.git and git@HOST:owner/name.git.
	Git func(path string) (httpURL, sshURL string)
	// OnCreate is called when a repository is created, e.g. to create it
	// on the Git server.
	OnCreate func(path string)
	// OnDeployKey is called when a deploy key is added, e.g. to let the
	// Git server accept it.
	OnDeployKey func(path string, key Key)
}

// Request is one request as the server received it.
type Request struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	// Auth is how the request authenticated, the credential left out
	// ("Bearer", "Basic <user>"); recorded for Bitbucket Server, whose
	// API takes either.
	Auth string         `json:"auth,omitempty"`
	Body map[string]any `json:"body,omitempty"`
}

// Repo is a repository as the server stores it.
type Repo struct {
	ID            int64
	Owner, Name   string
	Visibility    string
	Description   string
	DefaultBranch string
	Keys          []Key
	// Teams maps team to its permission as the host names it.
	Teams map[string]string
}

// Key is a deploy key.
type Key struct {
	ID       int64
	Title    string
	Key      string
	ReadOnly bool
}

// Server is a fake Git host API.
type Server struct {
	// Hostname is "127.0.0.1:PORT", what --hostname takes.
	Hostname string
	srv      *httptest.Server
	opts     Options

	mu       sync.Mutex
	requests []Request
	repos    map[string]*Repo
	nextID   int64
	failures map[string]int // "METHOD path" → status to answer once
	minted   []Minted
}

// New starts a Server that stops when the test ends.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.User == "" {
		opts.User = "me"
	}
	s := &Server{opts: opts, repos: map[string]*Repo{}, nextID: 100, failures: map[string]int{}}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	u, _ := url.Parse(s.srv.URL)
	s.Hostname = u.Host
	return s
}

// CAPEM is the certificate the server's TLS is signed with, for --ca-file.
func (s *Server) CAPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
}

// Requests returns what was received so far, and forgets it.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.requests
	s.requests = nil
	return out
}

// AddRepo stores a repository as if it existed before the test.
func (s *Server) AddRepo(r Repo) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.ID == 0 {
		s.nextID++
		r.ID = s.nextID
	}
	r.Keys = append([]Key(nil), r.Keys...)
	teams := map[string]string{}
	for k, v := range r.Teams {
		teams[k] = v
	}
	r.Teams = teams
	if r.DefaultBranch == "" {
		r.DefaultBranch = "main"
	}
	s.repos[r.Owner+"/"+r.Name] = &r
	return &r
}

// Repo returns a copy of the stored repository, nil when there is none.
func (s *Server) Repo(path string) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.repos[path]
	if !ok {
		return nil
	}
	c := *r
	c.Keys = append([]Key(nil), r.Keys...)
	c.Teams = map[string]string{}
	for k, v := range r.Teams {
		c.Teams[k] = v
	}
	return &c
}

// FailOnce makes the next request of method to path answer status.
func (s *Server) FailOnce(method, path string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[method+" "+path] = status
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.EscapedPath()}
	if r.URL.RawQuery != "" {
		req.Path += "?" + r.URL.RawQuery
	}
	if len(body) > 0 {
		_ = json.Unmarshal(body, &req.Body)
	}
	if s.opts.Kind == BitbucketServer {
		req.Auth = authScheme(r)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	segs := segments(r.URL.EscapedPath())
	if s.opts.Kind == GitHub && len(segs) > 2 && appEndpoint(r.Method, segs[2:]) {
		s.app(w, r, segs[2:])
		return
	}
	if !s.authorized(r) {
		s.fail(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	if code, ok := s.failures[r.Method+" "+r.URL.EscapedPath()]; ok {
		delete(s.failures, r.Method+" "+r.URL.EscapedPath())
		s.fail(w, code, http.StatusText(code))
		return
	}
	switch s.opts.Kind {
	case GitHub:
		s.github(w, r.Method, segs, req.Body)
	case Gitea:
		s.gitea(w, r.Method, segs, req.Body)
	case GitLab:
		s.gitlab(w, r.Method, segs, req.Body)
	case BitbucketServer:
		s.bitbucket(w, r, segs, req.Body)
	}
}

// fail answers an error in the host's shape.
func (s *Server) fail(w http.ResponseWriter, code int, msg string) {
	if s.opts.Kind != BitbucketServer {
		writeJSON(w, code, map[string]any{"message": msg})
		return
	}
	if code == http.StatusUnauthorized {
		msg = "Authentication failed. Please check your credentials and try again."
	}
	bitbucketErr(w, code, msg, "rest.ServiceException")
}

func (s *Server) authorized(r *http.Request) bool {
	switch s.opts.Kind {
	case GitHub:
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		return tok == s.opts.Token || s.mintedLive(tok)
	case Gitea:
		return r.Header.Get("Authorization") == "token "+s.opts.Token
	case BitbucketServer:
		// An HTTP access token as a bearer token, or as the password of
		// basic authentication.
		if _, pass, ok := r.BasicAuth(); ok {
			return pass == s.opts.Token
		}
		return r.Header.Get("Authorization") == "Bearer "+s.opts.Token
	default:
		return r.Header.Get("PRIVATE-TOKEN") == s.opts.Token
	}
}

// authScheme is r's authentication without its secret.
func authScheme(r *http.Request) string {
	if user, _, ok := r.BasicAuth(); ok {
		return "Basic " + user
	}
	scheme, _, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	return scheme
}

// mintedLive reports whether tok is an unexpired installation token; the
// caller holds s.mu.
func (s *Server) mintedLive(tok string) bool {
	for _, m := range s.minted {
		if m.Token == tok && time.Now().Before(m.ExpiresAt) {
			return true
		}
	}
	return false
}

// segments splits an escaped path and unescapes each segment, so that
// GitLab's "group%2Fproject" stays one.
func segments(p string) []string {
	var out []string
	for _, seg := range strings.Split(strings.Trim(p, "/"), "/") {
		u, err := url.PathUnescape(seg)
		if err != nil {
			u = seg
		}
		out = append(out, u)
	}
	return out
}

// create stores a new repository and calls OnCreate.
func (s *Server) create(owner, name, visibility, description, branch string) *Repo {
	s.nextID++
	if branch == "" {
		branch = "main"
	}
	r := &Repo{ID: s.nextID, Owner: owner, Name: name, Visibility: visibility, Description: description,
		DefaultBranch: branch, Teams: map[string]string{}}
	s.repos[owner+"/"+name] = r
	if s.opts.OnCreate != nil {
		s.opts.OnCreate(owner + "/" + name)
	}
	return r
}

func (s *Server) cloneURLs(r *Repo) (string, string) {
	path := r.Owner + "/" + r.Name
	if s.opts.Git != nil {
		return s.opts.Git(path)
	}
	return "https://" + s.Hostname + "/" + path + ".git", "git@" + strings.Split(s.Hostname, ":")[0] + ":" + path + ".git"
}

func (s *Server) hasGroup(name string) bool { return contains(s.opts.Groups, name) }
func (s *Server) hasTeam(name string) bool  { return contains(s.opts.Teams, name) }

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func (s *Server) addKey(r *Repo, title, key string, readOnly bool) Key {
	s.nextID++
	k := Key{ID: s.nextID, Title: title, Key: key, ReadOnly: readOnly}
	r.Keys = append(r.Keys, k)
	if s.opts.OnDeployKey != nil {
		s.opts.OnDeployKey(r.Owner+"/"+r.Name, k)
	}
	return k
}

func (s *Server) deleteKey(r *Repo, id string) bool {
	for i, k := range r.Keys {
		if itoa(k.ID) == id {
			r.Keys = append(r.Keys[:i], r.Keys[i+1:]...)
			return true
		}
	}
	return false
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
}

func str(body map[string]any, key string) string {
	v, _ := body[key].(string)
	return v
}

func boolean(body map[string]any, key string) bool {
	v, _ := body[key].(bool)
	return v
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
