package githubapp

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v75/github"
)

// refreshBefore is how long before its expiry a cached token is replaced:
// a delivery that starts with it must not see it expire half-way.
const refreshBefore = 5 * time.Minute

// idleFor is how long an App nobody asked about stays in the Cache: longer
// than an installation token lives (1 h), so a Provider or GitRepository
// that sends now and then keeps its token, while an App whose key was
// rotated or whose object was deleted leaves, private key and all.
const idleFor = 2 * time.Hour

// Token is an installation token and what came with it.
type Token struct {
	Value     string
	ExpiresAt time.Time
}

// Cache keeps the installation tokens of the Apps it was asked about.
type Cache struct {
	// now is the clock, for tests.
	now func() time.Time

	mu      sync.Mutex
	entries map[[sha256.Size]byte]*entry
}

// entry is one App's token and slug. Its lock is held while GitHub is
// asked, so that concurrent deliveries ask once.
type entry struct {
	mu    sync.Mutex
	token Token
	slug  string
	// used is when the entry was last asked for, under the Cache's lock.
	used time.Time
}

// NewCache returns an empty Cache.
func NewCache() *Cache {
	return &Cache{now: time.Now, entries: map[[sha256.Size]byte]*entry{}}
}

// Default is the process's Cache.
var Default = NewCache()

// key tells Apps apart: the same App with a rotated key is another.
func (c *Cache) key(a *App) [sha256.Size]byte {
	return sha256.Sum256([]byte(strings.Join([]string{
		strconv.FormatInt(a.ID, 10), strconv.FormatInt(a.InstallationID, 10), a.InstallationOwner,
		a.baseURL(), string(a.privateKey),
	}, "\x00")))
}

func (c *Cache) entry(a *App) *entry {
	k := c.key(a)
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		// A new App is the moment to let the idle ones go; a caller still
		// holding one of them finishes with it, the next asks GitHub anew.
		for old, idle := range c.entries {
			if now.Sub(idle.used) > idleFor {
				delete(c.entries, old)
			}
		}
		e = &entry{}
		c.entries[k] = e
	}
	e.used = now
	return e
}

// Token returns an installation token of a, asking GitHub through hc
// only when the cache has none that lasts past refreshBefore.
func (c *Cache) Token(ctx context.Context, hc *http.Client, a *App) (Token, error) {
	e := c.entry(a)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.token.Value != "" && c.now().Add(refreshBefore).Before(e.token.ExpiresAt) {
		return e.token, nil
	}
	t, err := c.newToken(ctx, hc, a)
	if err != nil {
		return Token{}, err
	}
	e.token = t
	return t, nil
}

// Slug returns the App's slug: its comments are signed "<slug>[bot]". It
// is asked for once (GET /app) and kept.
func (c *Cache) Slug(ctx context.Context, hc *http.Client, a *App) (string, error) {
	e := c.entry(a)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.slug != "" {
		return e.slug, nil
	}
	gh, jwt, err := c.appClient(hc, a)
	if err != nil {
		return "", err
	}
	app, _, err := gh.Apps.Get(ctx, "")
	if err != nil {
		return "", scrub(fmt.Errorf("reading the github app: %w", err), jwt, a)
	}
	if app.GetSlug() == "" {
		return "", errors.New("reading the github app: the answer has no slug")
	}
	e.slug = app.GetSlug()
	return e.slug, nil
}

// appClient is a client authenticated as the App itself, by a new JWT.
func (c *Cache) appClient(hc *http.Client, a *App) (*github.Client, string, error) {
	jwt, err := a.signJWT(c.now())
	if err != nil {
		return nil, "", err
	}
	base, err := url.Parse(a.baseURL())
	if err != nil || base.Host == "" {
		return nil, "", fmt.Errorf("%w: %s is not a URL", ErrInvalid, KeyBaseURL)
	}
	gh := github.NewClient(hc).WithAuthToken(jwt)
	gh.BaseURL = base
	return gh, jwt, nil
}

func (c *Cache) newToken(ctx context.Context, hc *http.Client, a *App) (Token, error) {
	gh, jwt, err := c.appClient(hc, a)
	if err != nil {
		return Token{}, err
	}
	id, err := installationID(ctx, gh, a)
	if err != nil {
		return Token{}, scrub(err, jwt, a)
	}
	t, _, err := gh.Apps.CreateInstallationToken(ctx, id, nil)
	if err != nil {
		return Token{}, scrub(fmt.Errorf("creating a github app installation token: %w", err), jwt, a)
	}
	if t.GetToken() == "" {
		return Token{}, errors.New("creating a github app installation token: the answer has no token")
	}
	return Token{Value: t.GetToken(), ExpiresAt: t.GetExpiresAt().Time}, nil
}

// installationID is the App's installation ID, looked up by owner when
// not given: first as an organization's, then as a user's, as Flux does.
func installationID(ctx context.Context, gh *github.Client, a *App) (int64, error) {
	if a.InstallationID != 0 {
		return a.InstallationID, nil
	}
	inst, _, orgErr := gh.Apps.FindOrganizationInstallation(ctx, a.InstallationOwner)
	if orgErr == nil {
		return inst.GetID(), nil
	}
	inst, _, userErr := gh.Apps.FindUserInstallation(ctx, a.InstallationOwner)
	if userErr == nil {
		return inst.GetID(), nil
	}
	return 0, fmt.Errorf("finding the github app installation of %q: as an organization: %w; as a user: %w",
		a.InstallationOwner, orgErr, userErr)
}

// scrub masks the JWT and the private key in err: GitHub, or a proxy,
// may quote the refused request.
func scrub(err error, jwt string, a *App) error {
	msg := err.Error()
	masked := msg
	for _, s := range append(a.Secrets(), jwt) {
		if s != "" {
			masked = strings.ReplaceAll(masked, s, "*****")
		}
	}
	if masked == msg {
		return err
	}
	return scrubbedError{msg: masked, err: err}
}

type scrubbedError struct {
	msg string
	err error
}

func (e scrubbedError) Error() string { return e.msg }
func (e scrubbedError) Unwrap() error { return e.err }
