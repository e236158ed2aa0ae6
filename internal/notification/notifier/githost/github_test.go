package githost

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/weir-gitops/weir/internal/auth/githubapp"
	"github.com/weir-gitops/weir/internal/notification/notifier"
)

// fakeGitHub answers GET /user with the login behind the bearer token,
// and is a GitHub App (slug "ci") whose installation 5 gets "ghs_inst".
func fakeGitHub(t *testing.T) (*httptest.Server, *[]string) {
	t.Helper()
	var (
		mu   sync.Mutex
		auth []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v3/app":
			_ = json.NewEncoder(w).Encode(map[string]any{"slug": "ci"})
		case "/api/v3/app/installations/5/access_tokens":
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(map[string]any{"token": "ghs_inst", "expires_at": time.Now().Add(time.Hour).Format(time.RFC3339)})
		case "/api/v3/user":
			logins := map[string]string{"Bearer pat": "alice", "Bearer pw": "bob"}
			_ = json.NewEncoder(w).Encode(map[string]any{"login": logins[r.Header.Get("Authorization")]})
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &auth
}

func TestNewGitHubCredentials(t *testing.T) {
	srv, seen := fakeGitHub(t)
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	app, err := githubapp.FromSecret(map[string][]byte{githubapp.KeyAppID: []byte("9"), githubapp.KeyInstallationID: []byte("5"),
		githubapp.KeyBaseURL:    []byte(srv.URL + "/api/v3"),
		githubapp.KeyPrivateKey: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})})
	if err != nil {
		t.Fatal(err)
	}
	base := notifier.Options{Type: "github", Address: srv.URL + "/org/app", HTTPClient: srv.Client()}
	tests := []struct {
		name      string
		change    func(*notifier.Options)
		wantLogin string
	}{
		{name: "token", change: func(o *notifier.Options) { o.Token, o.Password, o.GitHubApp = "pat", "pw", app }, wantLogin: "alice"},
		{name: "password without a token", change: func(o *notifier.Options) { o.Password = "pw" }, wantLogin: "bob"},
		{name: "app", change: func(o *notifier.Options) { o.GitHubApp = app }, wantLogin: "ci[bot]"},
	}
	for _, tt := range tests {
		o := base
		tt.change(&o)
		g, err := NewGitHub(o)
		if err != nil {
			t.Fatalf("%s: NewGitHub() = %v", tt.name, err)
		}
		if g.Client.BaseURL.String() != srv.URL+"/api/v3/" || g.Owner != "org" || g.Repo != "app" {
			t.Errorf("%s: client of %s %s/%s", tt.name, g.Client.BaseURL, g.Owner, g.Repo)
		}
		if login, err := g.Login(context.Background()); err != nil || login != tt.wantLogin {
			t.Errorf("%s: Login() = %q, %v; want %q", tt.name, login, err, tt.wantLogin)
		}
	}
	// The App's client sends the installation token, and lists it for scrubbing.
	o := base
	o.GitHubApp = app
	g, _ := NewGitHub(o)
	*seen = nil
	if _, _, err := g.Client.Users.Get(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if last := (*seen)[len(*seen)-1]; last != "GET /api/v3/user Bearer ghs_inst" {
		t.Errorf("API call sent as %q", last)
	}
	if s := g.Secrets(); s[len(s)-1] != "ghs_inst" {
		t.Errorf("Secrets() does not end with the installation token")
	}
	if _, err := NewGitHub(base); !errors.Is(err, notifier.ErrInvalidConfig) {
		t.Errorf("no credentials: NewGitHub() = %v, want ErrInvalidConfig", err)
	}
	if g, err := NewGitHub(notifier.Options{Type: "github", Address: "git@github.com:org/app.git", Token: "t"}); err != nil ||
		g.Client.BaseURL.String() != "https://api.github.com/" {
		t.Errorf("github.com: NewGitHub() = %v, %v", g, err)
	}
}
