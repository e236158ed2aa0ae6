package githubapp

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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func testKey(t *testing.T) (*rsa.PrivateKey, []byte) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
}

func TestFromSecret(t *testing.T) {
	_, pemKey := testKey(t)
	secret := func(kv ...string) map[string][]byte {
		m := map[string][]byte{KeyPrivateKey: pemKey}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = []byte(kv[i+1])
		}
		return m
	}
	if a, err := FromSecret(map[string][]byte{"token": []byte("t")}); a != nil || err != nil {
		t.Errorf("no app keys: FromSecret() = %v, %v; want nil, nil", a, err)
	}
	a, err := FromSecret(secret(KeyAppID, "123\n", KeyInstallationID, " 456", KeyBaseURL, "https://ghe.example.com/api/v3"))
	if err != nil || a.ID != 123 || a.InstallationID != 456 || a.baseURL() != "https://ghe.example.com/api/v3/" {
		t.Errorf("FromSecret() = %+v, %v", a, err)
	}
	if a, err := FromSecret(secret(KeyAppID, "1", KeyInstallationOwner, "octo")); err != nil || a.InstallationOwner != "octo" || a.baseURL() != DefaultBaseURL {
		t.Errorf("by owner: FromSecret() = %+v, %v", a, err)
	}
	for name, tt := range map[string]struct {
		data map[string][]byte
		want string
	}{
		"bad id":            {secret(KeyAppID, "abc", KeyInstallationID, "1"), KeyAppID + " is not a positive number"},
		"bad installation":  {secret(KeyAppID, "1", KeyInstallationID, "-4"), KeyInstallationID + " is not a positive number"},
		"no installation":   {secret(KeyAppID, "1"), KeyInstallationID + " or " + KeyInstallationOwner + " is required"},
		"both installation": {secret(KeyAppID, "1", KeyInstallationID, "2", KeyInstallationOwner, "o"), "set only one of"},
		"no key":            {map[string][]byte{KeyAppID: []byte("1"), KeyInstallationID: []byte("2")}, KeyPrivateKey + " is required"},
		"bad key":           {map[string][]byte{KeyAppID: []byte("1"), KeyInstallationID: []byte("2"), KeyPrivateKey: []byte("-----BEGIN RSA PRIVATE KEY-----\nc2VjcmV0\n-----END RSA PRIVATE KEY-----\n")}, "is not a PEM RSA private key"},
	} {
		_, err := FromSecret(tt.data)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: FromSecret() = %v, want %q", name, err, tt.want)
		}
		if err != nil && (strings.Contains(err.Error(), "c2VjcmV0") || strings.Contains(err.Error(), "PRIVATE KEY-----")) {
			t.Errorf("%s: error shows the key: %v", name, err)
		}
	}
}

// fakeApps is GitHub's App token endpoint: it checks the JWT and hands
// out tokens expiring after expiry.
type fakeApps struct {
	srv    *httptest.Server
	key    *rsa.PublicKey
	expiry time.Duration
	// now is the clock the JWT is checked against.
	now func() time.Time

	mu     sync.Mutex
	issued int
	iss    []string
}

func newFakeApps(t *testing.T, key *rsa.PublicKey) *fakeApps {
	f := &fakeApps{key: key, expiry: time.Hour, now: time.Now}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		var claims jwt.RegisteredClaims
		_, err := jwt.ParseWithClaims(raw, &claims, func(*jwt.Token) (any, error) { return f.key, nil },
			jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuedAt(), jwt.WithExpirationRequired(),
			jwt.WithTimeFunc(func() time.Time { return f.now() }))
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]string{"message": "bad JWT " + raw})
			return
		}
		if r.Method != http.MethodPost || r.URL.Path != "/api/v3/app/installations/456/access_tokens" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"Not Found"}`))
			return
		}
		f.mu.Lock()
		f.issued++
		f.iss = append(f.iss, claims.Issuer)
		n := f.issued
		f.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"token": "ghs_" + string(rune('a'+n)),
			"expires_at": f.now().Add(f.expiry).UTC().Format(time.RFC3339)})
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func TestCacheReusesTokensUntilShortlyBeforeExpiry(t *testing.T) {
	key, pemKey := testKey(t)
	f := newFakeApps(t, &key.PublicKey)
	a, err := FromSecret(map[string][]byte{KeyAppID: []byte("123"), KeyInstallationID: []byte("456"),
		KeyPrivateKey: pemKey, KeyBaseURL: []byte(f.srv.URL + "/api/v3/")})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	c := NewCache()
	c.now = func() time.Time { return now }
	f.now = c.now
	ctx := context.Background()

	first, err := c.Token(ctx, f.srv.Client(), a)
	if err != nil || first.Value != "ghs_b" {
		t.Fatalf("Token() = %+v, %v", first, err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if tok, err := c.Token(ctx, f.srv.Client(), a); err != nil || tok.Value != first.Value {
				t.Errorf("cached Token() = %+v, %v", tok, err)
			}
		}()
	}
	wg.Wait()
	if f.issued != 1 || f.iss[0] != "123" {
		t.Errorf("fake issued %d tokens to %v, want 1 to the App 123", f.issued, f.iss)
	}
	// Within refreshBefore of the expiry, a new token is asked for.
	now = first.ExpiresAt.Add(-refreshBefore + time.Second)
	if tok, err := c.Token(ctx, f.srv.Client(), a); err != nil || tok.Value == first.Value || f.issued != 2 {
		t.Errorf("near expiry: Token() = %+v, %v after %d tokens; want a new one", tok, err, f.issued)
	}
	// Another App (another key) has its own token.
	_, other := testKey(t)
	b, _ := FromSecret(map[string][]byte{KeyAppID: []byte("123"), KeyInstallationID: []byte("456"),
		KeyPrivateKey: other, KeyBaseURL: []byte(f.srv.URL + "/api/v3/")})
	_, err = c.Token(ctx, f.srv.Client(), b)
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("unknown key: Token() = %v, want the 401", err)
	}
	if strings.Contains(err.Error(), "eyJ") {
		t.Errorf("error shows the JWT: %v", err)
	}
	// An App nobody asked about for longer than idleFor leaves the Cache
	// when another App comes; one asked about within it stays.
	if n := len(c.entries); n != 2 {
		t.Fatalf("%d entries, want a and b", n)
	}
	now = now.Add(idleFor - time.Minute)
	if _, err := c.Token(ctx, f.srv.Client(), a); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	_, third := testKey(t)
	d, _ := FromSecret(map[string][]byte{KeyAppID: []byte("789"), KeyInstallationID: []byte("456"),
		KeyPrivateKey: third, KeyBaseURL: []byte(f.srv.URL + "/api/v3/")})
	_, _ = c.Token(ctx, f.srv.Client(), d)
	if _, kept := c.entries[c.key(a)]; !kept || len(c.entries) != 2 {
		t.Errorf("after b idled: %d entries (a kept: %v), want a and the new App", len(c.entries), kept)
	}
}

func TestClientSendsTheInstallationToken(t *testing.T) {
	key, pemKey := testKey(t)
	f := newFakeApps(t, &key.PublicKey)
	var got []string
	api := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
	}))
	t.Cleanup(api.Close)
	a, _ := FromSecret(map[string][]byte{KeyAppID: []byte("123"), KeyInstallationID: []byte("456"),
		KeyPrivateKey: pemKey, KeyBaseURL: []byte(f.srv.URL + "/api/v3")})
	c := NewCache().Client(f.srv.Client(), a)
	for range 2 {
		resp, err := c.Get(api.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if len(got) != 2 || got[0] != "Bearer ghs_b" || got[1] != got[0] || f.issued != 1 {
		t.Errorf("API got %v after %d tokens", got, f.issued)
	}
	if s := c.Secrets(); len(s) < 2 || s[len(s)-1] != "ghs_b" {
		t.Errorf("Secrets() does not list the token sent")
	}
}
