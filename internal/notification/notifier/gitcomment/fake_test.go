package gitcomment

import (
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// call is one request the fake received.
type call struct {
	method, path, query string
	header              http.Header
	body                []byte
}

// stored is a comment as the fake keeps it.
type stored struct {
	ID     int64
	Author string
	Body   string
}

// hostAPI is one host's comment API as it documents it: where the
// comments of request n are listed and created, where comment id is
// edited and with which method, the credentials it takes, and how it
// encodes a comment and a user.
type hostAPI struct {
	// list matches the escaped path of the request's comments; its group
	// is the request's number.
	list *regexp.Regexp
	// edit matches the escaped path of one comment; its last group is the
	// comment's ID.
	edit       *regexp.Regexp
	editMethod string
	// user is the path of the authenticated user.
	user string
	// auth returns the token the request carries.
	auth func(*http.Request) string
	// encode is a comment in the host's JSON; me is a user.
	encode func(stored) map[string]any
	me     func(login string) map[string]any
}

// fakeHost is a Git host on 127.0.0.1 keeping the comments posted to it:
// the user behind each token, the comments of each request, and, for
// GitHub, the dispatch events and a GitHub App's endpoints.
type fakeHost struct {
	t   *testing.T
	api hostAPI
	srv *httptest.Server

	mu       sync.Mutex
	calls    []call
	users    map[string]string // token → login
	comments map[string][]stored
	nextID   int64
	// failWrites answers that many writes with failCode first.
	failWrites int
	failCode   int

	// app is the GitHub App the fake knows: its public key, ID, slug,
	// the installation tokens it handed out.
	appKey      *rsa.PublicKey
	appID       int64
	appSlug     string
	owners      map[string]int64 // user (not organization) → installation
	tokens      int
	tokenExpiry time.Duration
}

func newFakeHost(t *testing.T, api hostAPI) *fakeHost {
	t.Helper()
	f := &fakeHost{t: t, api: api, users: map[string]string{}, comments: map[string][]stored{}, nextID: 100,
		owners: map[string]int64{}, tokenExpiry: time.Hour}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

var (
	appTokensPath   = regexp.MustCompile(`^/api/v3/app/installations/([0-9]+)/access_tokens$`)
	userInstallPath = regexp.MustCompile(`^/api/v3/users/([^/]+)/installation$`)
	orgInstallPath  = regexp.MustCompile(`^/api/v3/orgs/([^/]+)/installation$`)
	dispatchPath    = regexp.MustCompile(`^/api/v3/repos/org/app/dispatches$`)
)

func (f *fakeHost) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	p := r.URL.EscapedPath()
	f.calls = append(f.calls, call{method: r.Method, path: p, query: r.URL.RawQuery, header: r.Header.Clone(), body: body})
	if strings.HasPrefix(p, "/api/v3/app") || userInstallPath.MatchString(p) || orgInstallPath.MatchString(p) {
		f.serveApp(w, r, p)
		return
	}
	token := f.api.auth(r)
	login, ok := f.users[token]
	if !ok {
		// Echo the credentials, as a careless proxy might: the error the
		// notifier returns must not show them.
		writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials: " + r.Header.Get("Authorization") + r.Header.Get("Private-Token")})
		return
	}
	isWrite := r.Method != http.MethodGet
	if isWrite && f.failWrites > 0 {
		f.failWrites--
		writeJSON(w, f.failCode, map[string]string{"message": "refused: " + http.StatusText(f.failCode)})
		return
	}
	switch {
	case r.Method == http.MethodGet && p == f.api.user:
		writeJSON(w, http.StatusOK, f.api.me(login))
	case r.Method == http.MethodPost && dispatchPath.MatchString(p):
		var d struct {
			EventType string `json:"event_type"`
		}
		if json.Unmarshal(body, &d) != nil || d.EventType == "" {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Invalid request: event_type missing"})
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case f.api.list.MatchString(p) && (r.Method == http.MethodGet || r.Method == http.MethodPost):
		n := f.api.list.FindStringSubmatch(p)[1]
		if r.Method == http.MethodGet {
			out := []map[string]any{}
			for _, c := range f.comments[n] {
				out = append(out, f.api.encode(c))
			}
			writeJSON(w, http.StatusOK, out)
			return
		}
		text, ok := bodyOf(body)
		if !ok {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "body is missing"})
			return
		}
		f.nextID++
		c := stored{ID: f.nextID, Author: login, Body: text}
		f.comments[n] = append(f.comments[n], c)
		writeJSON(w, http.StatusCreated, f.api.encode(c))
	case r.Method == f.api.editMethod && f.api.edit.MatchString(p):
		m := f.api.edit.FindStringSubmatch(p)
		id, _ := strconv.ParseInt(m[len(m)-1], 10, 64)
		text, ok := bodyOf(body)
		if !ok {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "body is missing"})
			return
		}
		for n, cs := range f.comments {
			for i, c := range cs {
				if c.ID == id {
					if c.Author != login {
						writeJSON(w, http.StatusForbidden, map[string]string{"message": "not your comment"})
						return
					}
					f.comments[n][i].Body = text
					writeJSON(w, http.StatusOK, f.api.encode(f.comments[n][i]))
					return
				}
			}
		}
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	}
}

// serveApp speaks GitHub's App endpoints: each checks the App's JWT as
// GitHub does (RS256, signed by the App's key, issued by its ID, at most
// ten minutes long).
func (f *fakeHost) serveApp(w http.ResponseWriter, r *http.Request, p string) {
	if err := f.checkJWT(r); err != nil {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "A JSON web token could not be decoded: " + err.Error() + " " + r.Header.Get("Authorization")})
		return
	}
	switch {
	case r.Method == http.MethodGet && p == "/api/v3/app":
		writeJSON(w, http.StatusOK, map[string]any{"id": f.appID, "slug": f.appSlug})
	case r.Method == http.MethodGet && orgInstallPath.MatchString(p):
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	case r.Method == http.MethodGet && userInstallPath.MatchString(p):
		id, ok := f.owners[userInstallPath.FindStringSubmatch(p)[1]]
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": id})
	case r.Method == http.MethodPost && appTokensPath.MatchString(p):
		id, _ := strconv.ParseInt(appTokensPath.FindStringSubmatch(p)[1], 10, 64)
		if id != 42 {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
			return
		}
		f.tokens++
		tok := fmt.Sprintf("ghs_installation%d", f.tokens)
		f.users[tok] = f.appSlug + "[bot]"
		writeJSON(w, http.StatusCreated, map[string]any{"token": tok, "expires_at": time.Now().Add(f.tokenExpiry).UTC().Format(time.RFC3339)})
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	}
}

func (f *fakeHost) checkJWT(r *http.Request) error {
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || f.appKey == nil {
		return fmt.Errorf("no bearer token")
	}
	var claims jwt.RegisteredClaims
	_, err := jwt.ParseWithClaims(raw, &claims, func(*jwt.Token) (any, error) { return f.appKey, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(strconv.FormatInt(f.appID, 10)), jwt.WithIssuedAt(),
		jwt.WithExpirationRequired())
	if err != nil {
		return err
	}
	if claims.ExpiresAt.Sub(claims.IssuedAt.Time) > 10*time.Minute {
		return fmt.Errorf("expires more than 10 minutes after issued")
	}
	return nil
}

// bodyOf reads the comment text of a create or edit.
func bodyOf(b []byte) (string, bool) {
	var v struct {
		Body string `json:"body"`
	}
	if json.Unmarshal(b, &v) != nil || v.Body == "" {
		return "", false
	}
	return v.Body, true
}

// requests returns the requests received, without the App's.
func (f *fakeHost) requests() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []call
	for _, c := range f.calls {
		if !strings.HasPrefix(c.path, "/api/v3/app") && !strings.Contains(c.path, "/installation") {
			out = append(out, c)
		}
	}
	return out
}

// writes returns the requests that changed something.
func (f *fakeHost) writes() []call {
	var out []call
	for _, c := range f.requests() {
		if c.method != http.MethodGet {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakeHost) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = nil
}

func (f *fakeHost) commentsOf(n string) []stored {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]stored(nil), f.comments[n]...)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
