package githubapp

import (
	"net/http"
	"sync"
)

// Client returns an HTTP client that authenticates every request as a's
// installation, with a token from c, over hc's transport and timeout.
// Tokens are asked for through hc itself.
func (c *Cache) Client(hc *http.Client, a *App) *AuthClient {
	t := &transport{cache: c, app: a, hc: hc}
	return &AuthClient{Client: &http.Client{Transport: t, Timeout: hc.Timeout}, t: t}
}

// AuthClient is an HTTP client sending an installation token, which
// tells the tokens it sent for scrubbing.
type AuthClient struct {
	*http.Client
	t *transport
}

// Secrets returns the App's private key and the installation tokens the
// client has sent.
func (a *AuthClient) Secrets() []string {
	a.t.mu.Lock()
	defer a.t.mu.Unlock()
	return append(a.t.app.Secrets(), a.t.sent...)
}

type transport struct {
	cache *Cache
	app   *App
	hc    *http.Client

	mu   sync.Mutex
	sent []string
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, err := t.cache.Token(req.Context(), t.hc, t.app)
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	t.mu.Lock()
	if len(t.sent) == 0 || t.sent[len(t.sent)-1] != tok.Value {
		t.sent = append(t.sent, tok.Value)
	}
	t.mu.Unlock()
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+tok.Value)
	base := t.hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}
