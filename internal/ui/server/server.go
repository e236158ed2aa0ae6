package server

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/weir-gitops/weir/internal/scheme"
)

// Mode says whose credentials the server runs with.
type Mode string

const (
	// Local runs every request with the user's own kubeconfig.
	Local Mode = "local"
	// Cluster runs every request as the server's ServiceAccount
	// impersonating the logged-in user.
	Cluster Mode = "cluster"
)

//go:embed placeholder
var placeholder embed.FS

// Component is the name the UI records Events and writes objects under.
const Component = "weir-ui"

// Options configure a Server.
type Options struct {
	Mode Mode
	// Config is the user's config (Local) or the ServiceAccount's
	// (Cluster).
	Config *rest.Config
	// Assets are the browser files; index.html answers every path
	// outside /api/ that names no file. Nil serves a page saying the
	// build carries none (the API works).
	Assets fs.FS
	// Logger receives the server's own story; tokens never reach it.
	Logger logr.Logger
	// SecureCookies marks the session cookie Secure even without TLS on
	// the connection (behind a TLS-terminating proxy).
	SecureCookies bool
	// SessionTTL bounds a session's life; zero means 12 hours.
	SessionTTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// PageSize is how many rows of the overview's object table one
	// /api/overview answer holds; zero means fleetview.DefaultPageSize.
	PageSize int
}

// Server serves the UI. Create it with New.
type Server struct {
	opts   Options
	log    logr.Logger
	scheme *runtime.Scheme
	mapper meta.RESTMapper
	// base is the client of Config: the user's (Local) or the
	// ServiceAccount's (Cluster), for TokenReviews and Events.
	base client.Client
	mux  *http.ServeMux

	mu       sync.Mutex
	sessions map[string]*session
	// logins are the one-time login tokens not yet used (Local).
	logins map[string]bool
	// local is the one identity of Local mode, learnt once.
	local *identity
	// port is the listener's, for the Host check of Local mode.
	port string
	hubs *hubs
}

// New returns a server for opts.
func New(opts Options) (*Server, error) {
	if opts.Mode != Local && opts.Mode != Cluster {
		return nil, fmt.Errorf("unknown mode %q", opts.Mode)
	}
	if opts.Config == nil {
		return nil, errors.New("a config is required")
	}
	if opts.Assets == nil {
		sub, err := fs.Sub(placeholder, "placeholder")
		if err != nil {
			return nil, fmt.Errorf("reading the placeholder page: %w", err)
		}
		opts.Assets = sub
	}
	if opts.SessionTTL == 0 {
		opts.SessionTTL = 12 * time.Hour
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{opts: opts, log: opts.Logger, sessions: map[string]*session{}, logins: map[string]bool{}}
	var err error
	if s.scheme, err = scheme.New(); err != nil {
		return nil, err
	}
	httpClient, err := rest.HTTPClientFor(opts.Config)
	if err != nil {
		return nil, fmt.Errorf("building HTTP client: %w", err)
	}
	if s.mapper, err = apiutil.NewDynamicRESTMapper(opts.Config, httpClient); err != nil {
		return nil, fmt.Errorf("building REST mapper: %w", err)
	}
	if s.base, err = client.New(opts.Config, client.Options{Scheme: s.scheme, Mapper: s.mapper, HTTPClient: httpClient}); err != nil {
		return nil, fmt.Errorf("building client: %w", err)
	}
	s.hubs = newHubs(s)
	s.routes()
	return s, nil
}

// Handler is the server's whole HTTP handler.
func (s *Server) Handler() http.Handler {
	return s.secure(http.HandlerFunc(s.serve))
}

// Listen opens addr for Serve and learns its port, for LoginURL and the
// Host check.
func (s *Server) Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	s.learnPort(ln)
	return ln, nil
}

func (s *Server) learnPort(ln net.Listener) {
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok {
		s.mu.Lock()
		s.port = strconv.Itoa(tcp.Port)
		s.mu.Unlock()
	}
}

// Serve serves on ln until ctx ends, then shuts down within five seconds.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.learnPort(ln)
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serving UI: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return fmt.Errorf("shutting down UI: %w", err)
	}
	return nil
}

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /api/whoami", s.withSession(s.whoami))
	m.HandleFunc("POST /api/login", s.login)
	m.HandleFunc("POST /api/logout", s.withSession(s.logout))
	m.HandleFunc("GET /api/overview", s.withSession(s.overview))
	m.HandleFunc("GET /api/graph", s.withSession(s.graph))
	m.HandleFunc("GET /api/objects/{kind}/{namespace}/{name}", s.withSession(s.object))
	m.HandleFunc("GET /api/objects/{kind}/{namespace}/{name}/events", s.withSession(s.objectEvents))
	m.HandleFunc("GET /api/objects/{kind}/{namespace}/{name}/diff", s.withSession(s.objectDiff))
	m.HandleFunc("GET /api/pods/{namespace}/{name}/logs", s.withSession(s.podLogs))
	m.HandleFunc("GET /api/pods/{namespace}/{name}/logs/{container}/follow", s.withSession(s.followLog))
	m.HandleFunc("GET /api/stream", s.withSession(s.stream))
	m.HandleFunc("POST /api/actions", s.withSession(s.actions))
	m.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such API route: "+r.Method+" "+r.URL.Path)
	})
	m.HandleFunc("/", s.assets)
	s.mux = m
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	start := s.opts.Now()
	s.mux.ServeHTTP(rec, r)
	// The path only: a query may hold the login token.
	s.log.V(1).Info("request", "method", r.Method, "path", r.URL.Path, "status", rec.status,
		"duration", s.opts.Now().Sub(start).String())
}

// statusRecorder remembers the status written, for the request log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// Flush lets server-sent events through the recorder.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the connection beneath.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
