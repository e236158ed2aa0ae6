package vault

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/internal/auth"
)

// ConfigKey is the ConfigMap data key holding the instances, Flux's.
const ConfigKey = "config.yaml"

// Instance is one Vault or OpenBao server the controller may log in to.
type Instance struct {
	// Address is the server's URL as SOPS files name it (vault_address),
	// and the audience of the ServiceAccount tokens presented to it.
	Address string `json:"address"`
	// LoginPath is the path, below /v1/, of the JWT-backed auth method's
	// login endpoint, e.g. auth/kubernetes/login.
	LoginPath string `json:"loginPath"`
}

// Config is the ConfigMap's config.yaml.
type Config struct {
	Instances []Instance `json:"instances"`
}

// ParseConfig reads a --sops-vault-configmap ConfigMap's data. Every
// instance needs an http(s) address and a login path, and an address may
// be listed once.
func ParseConfig(data map[string]string) (*Config, error) {
	raw, ok := data[ConfigKey]
	if !ok {
		return nil, fmt.Errorf("no %s key", ConfigKey)
	}
	var c Config
	if err := yaml.UnmarshalStrict([]byte(raw), &c); err != nil {
		return nil, fmt.Errorf("%s: %w", ConfigKey, err)
	}
	seen := map[string]bool{}
	for i := range c.Instances {
		in := &c.Instances[i]
		in.Address = normalize(in.Address)
		in.LoginPath = strings.Trim(in.LoginPath, "/")
		switch {
		case !strings.HasPrefix(in.Address, "https://") && !strings.HasPrefix(in.Address, "http://"):
			return nil, fmt.Errorf("%s: instance %d: address '%s' is not an http or https URL", ConfigKey, i, in.Address)
		case in.LoginPath == "":
			return nil, fmt.Errorf("%s: instance %d (%s): loginPath is required", ConfigKey, i, in.Address)
		case seen[in.Address]:
			return nil, fmt.Errorf("%s: address '%s' is listed twice", ConfigKey, in.Address)
		}
		seen[in.Address] = true
	}
	return &c, nil
}

// Instance returns the instance of address (a SOPS file's vault_address).
func (c *Config) Instance(address string) (Instance, bool) {
	if c == nil {
		return Instance{}, false
	}
	address = normalize(address)
	for _, in := range c.Instances {
		if in.Address == address {
			return in, true
		}
	}
	return Instance{}, false
}

// normalize drops the trailing slashes SOPS and people add or leave out.
func normalize(address string) string { return strings.TrimRight(strings.TrimSpace(address), "/") }

// Role is the Vault role a ServiceAccount logs in as: Flux's
// <namespace>_<name>.
func Role(sa types.NamespacedName) string { return sa.Namespace + "_" + sa.Name }

// Client logs in to Vault. The zero value uses a client with a timeout.
type Client struct {
	// HTTPClient carries the login calls; nil is one with a 30 second
	// timeout and the system's roots.
	HTTPClient *http.Client
}

// Default is the client the controller uses.
var Default = &Client{}

func (c *Client) httpClient() *http.Client {
	if c != nil && c.HTTPClient != nil {
		return c.HTTPClient
	}
	return &http.Client{Timeout: 30 * time.Second}
}

// Login returns the Vault token of id at in: from the settings' cache, or
// by presenting a ServiceAccount token (audience in.Address) as role
// <namespace>_<name> to in's login endpoint. The controller's identity
// presents its own ServiceAccount (auth.ControllerServiceAccount).
func (c *Client) Login(ctx context.Context, settings *auth.Settings, id auth.Identity, in Instance) (auth.Token, error) {
	subject, err := auth.Subject(id)
	if err != nil {
		return auth.Token{}, err
	}
	var cache *auth.Cache
	if settings != nil {
		cache = settings.Cache
	}
	key := "vault\n" + in.Address + "\n" + in.LoginPath + "\n" + subject.String()
	return cache.Get(ctx, key, func(ctx context.Context) (auth.Token, error) {
		jwt, err := settings.ServiceAccountToken(ctx, subject, in.Address)
		if err != nil {
			return auth.Token{}, err
		}
		return c.login(ctx, in, Role(*subject.ServiceAccount), jwt.Value)
	})
}

// loginResponse is the part of Vault's login answer used here.
type loginResponse struct {
	Auth *struct {
		ClientToken   string `json:"client_token"`
		LeaseDuration int64  `json:"lease_duration"`
	} `json:"auth"`
	Errors []string `json:"errors"`
}

func (c *Client) login(ctx context.Context, in Instance, role, jwt string) (auth.Token, error) {
	url := in.Address + "/v1/" + in.LoginPath
	body, err := json.Marshal(map[string]string{"role": role, "jwt": jwt})
	if err != nil {
		return auth.Token{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return auth.Token{}, fmt.Errorf("vault login at %s: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return auth.Token{}, fmt.Errorf("vault login at %s as role '%s': %w", url, role, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return auth.Token{}, fmt.Errorf("vault login at %s as role '%s': reading the answer: %w", url, role, err)
	}
	var out loginResponse
	decodeErr := json.Unmarshal(raw, &out)
	if resp.StatusCode != http.StatusOK {
		reason := http.StatusText(resp.StatusCode)
		if decodeErr == nil && len(out.Errors) > 0 {
			reason = strings.Join(out.Errors, "; ")
		}
		return auth.Token{}, fmt.Errorf("vault login at %s as role '%s' failed: HTTP %d: %s", url, role, resp.StatusCode, reason)
	}
	if decodeErr != nil || out.Auth == nil || out.Auth.ClientToken == "" {
		return auth.Token{}, fmt.Errorf("vault login at %s as role '%s': %w", url, role, errors.New("the answer holds no auth.client_token"))
	}
	t := auth.Token{Value: out.Auth.ClientToken}
	if out.Auth.LeaseDuration > 0 {
		t.ExpiresAt = start.Add(time.Duration(out.Auth.LeaseDuration) * time.Second)
	}
	return t, nil
}
