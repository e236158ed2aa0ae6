package commitstatus

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sync"
	"testing"
)

// call is one request a fake host received.
type call struct {
	method, path, query string
	header              http.Header
	body                []byte
}

// hostAPI describes one Git host's commit status API as the host
// documents it: where statuses are posted and read, the credentials it
// takes, the fields a status must have, and the shape it reads them back
// in.
type hostAPI struct {
	// post and get match the escaped path; their first group is the
	// commit.
	post, get *regexp.Regexp
	// authorized checks the request's credentials.
	authorized func(*http.Request) bool
	// required are the fields a posted status must carry.
	required []string
	// key names the field that identifies a status.
	key string
	// list answers a read with stored, the statuses posted on the
	// commit, newest first.
	list func(w http.ResponseWriter, r *http.Request, stored []map[string]any)
}

// fakeHost is a Git host on 127.0.0.1 keeping the statuses posted to it.
type fakeHost struct {
	api hostAPI
	srv *httptest.Server

	mu       sync.Mutex
	calls    []call
	statuses map[string][]map[string]any
	// failPosts answers that many posts with 500 first.
	failPosts int
}

func newFakeHost(t *testing.T, api hostAPI) *fakeHost {
	t.Helper()
	f := &fakeHost{api: api, statuses: map[string][]map[string]any{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeHost) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call{method: r.Method, path: r.URL.EscapedPath(), query: r.URL.RawQuery, header: r.Header.Clone(), body: body})
	if !f.api.authorized(r) {
		// Echo the credentials, as a careless proxy might: the error
		// the notifier returns must not show them.
		writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials: " + r.Header.Get("Authorization") + r.Header.Get("Private-Token")})
		return
	}
	switch {
	case r.Method == http.MethodPost && f.api.post.MatchString(r.URL.EscapedPath()):
		sha := f.api.post.FindStringSubmatch(r.URL.EscapedPath())[1]
		var st map[string]any
		if err := json.Unmarshal(body, &st); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"message": "body is not JSON"})
			return
		}
		for _, k := range f.api.required {
			if _, ok := st[k]; !ok {
				writeJSON(w, http.StatusBadRequest, map[string]string{"message": "missing " + k})
				return
			}
		}
		if f.failPosts > 0 {
			f.failPosts--
			writeJSON(w, http.StatusInternalServerError, map[string]string{"message": "internal error"})
			return
		}
		f.statuses[sha] = append([]map[string]any{st}, f.statuses[sha]...)
		writeJSON(w, http.StatusCreated, st)
	case r.Method == http.MethodGet && f.api.get.MatchString(r.URL.EscapedPath()):
		f.api.list(w, r, f.statuses[f.api.get.FindStringSubmatch(r.URL.EscapedPath())[1]])
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	}
}

// posts returns the posts received.
func (f *fakeHost) posts() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []call
	for _, c := range f.calls {
		if c.method == http.MethodPost {
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

func (f *fakeHost) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// latestByKey keeps the newest status of each key, newest first.
func latestByKey(stored []map[string]any, key string) []map[string]any {
	var out []map[string]any
	var seen []any
	for _, s := range stored {
		if slices.Contains(seen, s[key]) {
			continue
		}
		seen = append(seen, s[key])
		out = append(out, s)
	}
	return out
}

func basicAuthIs(user, pass string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		u, p, ok := r.BasicAuth()
		return ok && u == user && p == pass
	}
}

func headerIs(name, value string) func(*http.Request) bool {
	return func(r *http.Request) bool { return r.Header.Get(name) == value }
}
