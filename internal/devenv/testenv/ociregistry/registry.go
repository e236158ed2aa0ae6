package ociregistry

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/sirupsen/logrus"
	"golang.org/x/crypto/bcrypt"

	// Registered by name in the configuration below.
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
)

// realm is the name the registry gives in its basic-auth challenge.
const realm = "weir-test"

// Options configures a Registry. The zero value allows anonymous push and pull.
type Options struct {
	// Username and Password, when Username is set, make every request require
	// basic auth.
	Username, Password string
}

// Registry is a distribution registry with in-memory storage.
type Registry struct {
	server *httptest.Server
	auth   authn.Authenticator
}

// New starts a Registry on 127.0.0.1 and stops it when the test ends.
func New(t testing.TB, opts Options) *Registry {
	t.Helper()
	if !testing.Verbose() {
		// distribution logs through logrus's global logger, one line per request.
		logrus.SetOutput(io.Discard)
	}
	cfg, err := config(t.TempDir(), opts)
	if err != nil {
		t.Fatalf("configure registry: %v", err)
	}
	app := handlers.NewApp(context.Background(), cfg)

	r := &Registry{server: httptest.NewUnstartedServer(app), auth: authn.Anonymous}
	r.server.Config.ErrorLog = log.New(io.Discard, "", 0)
	r.server.Start()
	t.Cleanup(func() {
		r.server.Close()
		_ = app.Shutdown()
	})
	if opts.Username != "" {
		r.auth = &authn.Basic{Username: opts.Username, Password: opts.Password}
	}
	return r
}

// config is the registry configuration for opts; dir holds the htpasswd file.
func config(dir string, opts Options) (*configuration.Configuration, error) {
	cfg := &configuration.Configuration{
		Storage: configuration.Storage{
			"inmemory": configuration.Parameters{},
			"delete":   configuration.Parameters{"enabled": true},
			// The purger is a goroutine that would outlive the test.
			"maintenance": configuration.Parameters{"uploadpurging": map[any]any{"enabled": false}},
		},
	}
	// A fixed secret spares a warning about generating a random one.
	cfg.HTTP.Secret = "weir-test-secret"
	if opts.Username == "" {
		return cfg, nil
	}

	// MinCost keeps bcrypt, which runs on every request, fast.
	hash, err := bcrypt.GenerateFromPassword([]byte(opts.Password), bcrypt.MinCost)
	if err != nil {
		return nil, fmt.Errorf("hash password: %w", err)
	}
	path := filepath.Join(dir, "htpasswd")
	if err := os.WriteFile(path, []byte(opts.Username+":"+string(hash)+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("write htpasswd: %w", err)
	}
	cfg.Auth = configuration.Auth{"htpasswd": configuration.Parameters{"realm": realm, "path": path}}
	return cfg, nil
}

// Host is the registry's address, 127.0.0.1:PORT, as image references start.
func (r *Registry) Host() string {
	return strings.TrimPrefix(r.server.URL, "http://")
}

// URL is the registry's base URL, http://127.0.0.1:PORT.
func (r *Registry) URL() string { return r.server.URL }
