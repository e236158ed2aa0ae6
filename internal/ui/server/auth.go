package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/ui/fleetview"
)

// SessionCookie is the session cookie's name, in Local mode followed by
// the listener's port (cookieName).
const SessionCookie = "weir_session"

// CSRFHeader carries the session's CSRF token on unsafe requests.
const CSRFHeader = "X-CSRF-Token"

// identity is who a session acts for.
type identity struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// session is one logged-in browser.
type session struct {
	id, csrf string
	user     identity
	// cfg and client act as the user: the user's kubeconfig (Local) or
	// the ServiceAccount impersonating the user (Cluster).
	cfg    *rest.Config
	client client.WithWatch
	// lister reads the overview's and the graph's lists as the user.
	lister  fleetview.Lister
	expires time.Time
}

// hubKey is the identity whose watches a session shares.
func (s *session) hubKey() string { return s.user.Name + "\x00" + strings.Join(s.user.Groups, ",") }

func randomToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("reading random bytes: %v", err))
	}
	return hex.EncodeToString(b)
}

// LoginURL mints a one-time login token (Local mode) and returns the URL
// that spends it: http://127.0.0.1:PORT/?token=…. Serve must have started.
func (s *Server) LoginURL() string {
	token := randomToken()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logins[token] = true
	return "http://127.0.0.1:" + s.port + "/?token=" + token
}

// secure wraps every request: security headers, then the Host check of
// Local mode, then the spending of a login token, then the CSRF check of
// unsafe methods.
func (s *Server) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		if s.opts.Mode == Local && !s.localHost(r.Host) {
			writeError(w, http.StatusForbidden, fmt.Sprintf("host %q is not this server's: open it as 127.0.0.1 or localhost", r.Host))
			return
		}
		if s.opts.Mode == Local && r.Method == http.MethodGet && r.URL.Query().Has("token") {
			s.spendLogin(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if err := s.checkOrigin(r); err != nil {
				writeError(w, http.StatusForbidden, err.Error())
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// localHost reports whether host is a loopback name with the server's
// port: a DNS-rebinding page reaches 127.0.0.1 under a name of its own.
func (s *Server) localHost(host string) bool {
	name, port, err := net.SplitHostPort(host)
	if err != nil {
		return false
	}
	s.mu.Lock()
	own := s.port
	s.mu.Unlock()
	return port == own && (name == "127.0.0.1" || name == "localhost" || name == "::1")
}

// checkOrigin accepts a request whose Origin (or, without one, Referer) is
// the server's own scheme and host; a request with neither is not from a
// browser page and needs the CSRF token alone.
func (s *Server) checkOrigin(r *http.Request) error {
	origin := r.Header.Get("Origin")
	if origin == "" {
		origin = r.Header.Get("Referer")
	}
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	scheme := "http"
	if r.TLS != nil || s.opts.SecureCookies {
		scheme = "https"
	}
	if err != nil || u.Host != r.Host || u.Scheme != scheme {
		return fmt.Errorf("cross-origin request from %q refused", origin)
	}
	return nil
}

// spendLogin turns a one-time login token into a session cookie, then
// sends the browser to the same page without the token.
func (s *Server) spendLogin(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	s.mu.Lock()
	ok := s.logins[token]
	delete(s.logins, token)
	s.mu.Unlock()
	q := r.URL.Query()
	q.Del("token")
	target := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
	if !ok {
		if s.sessionOf(r) != nil {
			// The link opened again (a bookmark, the terminal's link
			// clicked twice) by a browser already logged in: its page.
			http.Redirect(w, r, target.String(), http.StatusSeeOther)
			return
		}
		const msg = "this login link was used already or is not this server's: run weir ui again for a new one"
		if strings.Contains(r.Header.Get("Accept"), "text/html") {
			// A person following a link reads a sentence, not JSON.
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintln(w, msg)
			return
		}
		writeError(w, http.StatusForbidden, msg)
		return
	}
	id, err := s.localIdentity(r.Context())
	if err != nil {
		writeAPIError(w, err)
		return
	}
	sess := s.newSession(id, s.opts.Config, nil)
	s.setCookie(w, r, sess)
	http.Redirect(w, r, target.String(), http.StatusSeeOther)
}

// localIdentity asks the API server who the kubeconfig's user is, once.
func (s *Server) localIdentity(ctx context.Context) (identity, error) {
	s.mu.Lock()
	known := s.local
	s.mu.Unlock()
	if known != nil {
		return *known, nil
	}
	review := &authenticationv1.SelfSubjectReview{}
	if err := s.base.Create(ctx, review); err != nil {
		return identity{}, fmt.Errorf("asking the API server who you are (SelfSubjectReview): %w", err)
	}
	u := review.Status.UserInfo
	id := identity{Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra(u.Extra)}
	s.mu.Lock()
	s.local = &id
	s.mu.Unlock()
	return id, nil
}

func extra(in map[string]authenticationv1.ExtraValue) map[string][]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string][]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

// newSession stores a session for id acting with cfg; c, when nil, is
// built from cfg.
func (s *Server) newSession(id identity, cfg *rest.Config, c client.WithWatch) *session {
	if c == nil {
		var err error
		if c, err = client.NewWithWatch(cfg, client.Options{Scheme: s.scheme, Mapper: s.mapper}); err != nil {
			// client.New fails only on an unusable config, which New
			// has already built one client from.
			panic(fmt.Sprintf("building the user's client: %v", err))
		}
	}
	// The dynamic client's config: JSON, and a status error decoded
	// as the API server wrote it (a 403 names the user and the verb).
	rc, err := rest.UnversionedRESTClientFor(dynamic.ConfigFor(cfg))
	if err != nil {
		panic(fmt.Sprintf("building the user's REST client: %v", err))
	}
	sess := &session{id: randomToken(), csrf: randomToken(), user: id, cfg: cfg, client: c,
		lister:  fleetview.Lister{Client: rc, Mapper: s.mapper},
		expires: s.opts.Now().Add(s.opts.SessionTTL)}
	s.mu.Lock()
	s.sessions[sess.id] = sess
	s.mu.Unlock()
	return sess
}

// cookieName is the session cookie's name. Browsers keep cookies per
// host, whatever the port: in Local mode, where two weir ui may run on
// 127.0.0.1, the port is part of the name, so that logging in to one does
// not log the other out.
func (s *Server) cookieName() string {
	if s.opts.Mode == Local && s.port != "" {
		return SessionCookie + "_" + s.port
	}
	return SessionCookie
}

func (s *Server) setCookie(w http.ResponseWriter, r *http.Request, sess *session) {
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: sess.id, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil || s.opts.SecureCookies, Expires: sess.expires})
}

// sessionOf returns the request's live session, or nil.
func (s *Server) sessionOf(r *http.Request) *session {
	c, err := r.Cookie(s.cookieName())
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.sessions[c.Value]
	if sess != nil && s.opts.Now().After(sess.expires) {
		delete(s.sessions, c.Value)
		return nil
	}
	return sess
}

// withSession runs h with the request's session: 401 without one, and 403
// for an unsafe method without the session's CSRF token.
func (s *Server) withSession(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess := s.sessionOf(r)
		if sess == nil {
			msg := "not logged in: POST a Kubernetes bearer token to /api/login"
			if s.opts.Mode == Local {
				msg = "not logged in: open the URL weir ui printed"
			}
			writeJSON(w, http.StatusUnauthorized, errorBody{Error: msg, Mode: string(s.opts.Mode)})
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead &&
			subtle.ConstantTimeCompare([]byte(r.Header.Get(CSRFHeader)), []byte(sess.csrf)) != 1 {
			writeError(w, http.StatusForbidden, "missing or wrong "+CSRFHeader+" header: take it from /api/whoami")
			return
		}
		h(w, r, sess)
	}
}

// loginRequest is the body of POST /api/login.
type loginRequest struct {
	Token string `json:"token"`
}

// login (Cluster mode) checks a bearer token with a TokenReview as the
// ServiceAccount and opens a session impersonating its user. The token
// stays in this function: the session keeps the user's name and groups.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if s.opts.Mode != Cluster {
		writeError(w, http.StatusNotFound, "weir ui logs in with the URL it printed, not with a token")
		return
	}
	var req loginRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil || req.Token == "" {
		writeError(w, http.StatusBadRequest, `the body must be {"token": "<Kubernetes bearer token>"}`)
		return
	}
	id, err := s.review(r.Context(), req.Token)
	if err != nil {
		var denied *deniedError
		if errors.As(err, &denied) {
			writeError(w, http.StatusUnauthorized, err.Error())
			return
		}
		writeAPIError(w, err)
		return
	}
	cfg := rest.CopyConfig(s.opts.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: id.Name, UID: id.UID, Groups: id.Groups, Extra: id.Extra}
	sess := s.newSession(id, cfg, nil)
	s.setCookie(w, r, sess)
	s.log.Info("logged in", "user", id.Name)
	writeJSON(w, http.StatusOK, s.whoamiOf(sess))
}

// deniedError is a token the API server does not accept.
type deniedError struct{ reason string }

func (e *deniedError) Error() string { return "the token was not accepted: " + e.reason }

func (s *Server) review(ctx context.Context, token string) (identity, error) {
	tr := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}
	if err := s.base.Create(ctx, tr); err != nil {
		return identity{}, fmt.Errorf("checking the token (TokenReview): %w", err)
	}
	if !tr.Status.Authenticated {
		reason := tr.Status.Error
		if reason == "" {
			reason = "not authenticated"
		}
		return identity{}, &deniedError{reason: reason}
	}
	u := tr.Status.User
	return identity{Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra(u.Extra)}, nil
}

func (s *Server) logout(w http.ResponseWriter, _ *http.Request, sess *session) {
	s.mu.Lock()
	delete(s.sessions, sess.id)
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.WriteHeader(http.StatusNoContent)
}

// whoamiResponse is GET /api/whoami.
type whoamiResponse struct {
	User      string   `json:"user"`
	Groups    []string `json:"groups"`
	Mode      Mode     `json:"mode"`
	CSRFToken string   `json:"csrfToken"`
}

func (s *Server) whoamiOf(sess *session) whoamiResponse {
	groups := sess.user.Groups
	if groups == nil {
		groups = []string{}
	}
	return whoamiResponse{User: sess.user.Name, Groups: groups, Mode: s.opts.Mode, CSRFToken: sess.csrf}
}

func (s *Server) whoami(w http.ResponseWriter, _ *http.Request, sess *session) {
	writeJSON(w, http.StatusOK, s.whoamiOf(sess))
}
