package vault

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	vaultapi "github.com/hashicorp/vault/api"
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

// Client logs in to Vault.
type Client struct{}

// Default is the client the controller uses.
var Default = &Client{}

// Login returns the Vault token of id at in: from the settings' cache, or
// by presenting a ServiceAccount token (audience in.Address) as role
// <namespace>_<name> to in's login endpoint. The controller's identity
// presents its own ServiceAccount (auth.ControllerServiceAccount).
func (c *Client) Login(ctx context.Context, settings *auth.Settings, id auth.Identity, in Instance) (auth.Token, error) {
	subject, key, err := cacheKey(id, in)
	if err != nil {
		return auth.Token{}, err
	}
	return cacheOf(settings).Get(ctx, key, func(ctx context.Context) (auth.Token, error) {
		jwt, err := settings.ServiceAccountToken(ctx, subject, in.Address)
		if err != nil {
			return auth.Token{}, err
		}
		return c.login(ctx, in, Role(*subject.ServiceAccount), jwt.Value)
	})
}

// Forget drops the token Login keeps for id at in if it is still token:
// Vault refused it (revoked, or its lease cut short), so the next Login
// logs in again.
func (c *Client) Forget(settings *auth.Settings, id auth.Identity, in Instance, token string) error {
	_, key, err := cacheKey(id, in)
	if err != nil {
		return err
	}
	cacheOf(settings).ForgetToken(key, token)
	return nil
}

// cacheKey is the subject that logs in for id and the cache key of its
// token at in.
func cacheKey(id auth.Identity, in Instance) (auth.Identity, string, error) {
	subject, err := auth.Subject(id)
	if err != nil {
		return auth.Identity{}, "", err
	}
	return subject, "vault\n" + in.Address + "\n" + in.LoginPath + "\n" + subject.String(), nil
}

func cacheOf(settings *auth.Settings) *auth.Cache {
	if settings == nil {
		return nil
	}
	return settings.Cache
}

// apiClient is a Vault API client for address configured the way SOPS
// configures its transit client (hashicorp/vault/api's DefaultConfig,
// which reads VAULT_CACERT, VAULT_CAPATH, VAULT_CLIENT_CERT,
// VAULT_CLIENT_KEY, VAULT_SKIP_VERIFY, VAULT_TLS_SERVER_NAME and the
// timeouts and retries from the controller's environment), so the login
// trusts what the transit calls trust. It carries no token and no
// namespace (the login needs none; loginPath names a namespace itself)
// and goes to address even when VAULT_AGENT_ADDR is set: the
// ServiceAccount token is for address only.
func apiClient(address string) (*vaultapi.Client, error) {
	cfg := vaultapi.DefaultConfig()
	if cfg.Error != nil {
		return nil, fmt.Errorf("configuring the Vault client from the environment: %w", cfg.Error)
	}
	cfg.Address, cfg.AgentAddress = address, ""
	c, err := vaultapi.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("configuring the Vault client: %w", err)
	}
	c.ClearToken()
	c.ClearNamespace()
	return c, nil
}

func (c *Client) login(ctx context.Context, in Instance, role, jwt string) (auth.Token, error) {
	url := in.Address + "/v1/" + in.LoginPath
	api, err := apiClient(in.Address)
	if err != nil {
		return auth.Token{}, fmt.Errorf("vault login at %s: %w", url, err)
	}
	start := time.Now()
	secret, err := api.Logical().WriteWithContext(ctx, in.LoginPath, map[string]any{"role": role, "jwt": jwt})
	var refused *vaultapi.ResponseError
	switch {
	case errors.As(err, &refused):
		reason := http.StatusText(refused.StatusCode)
		if !refused.RawError && len(refused.Errors) > 0 {
			reason = strings.Join(refused.Errors, "; ")
		}
		return auth.Token{}, fmt.Errorf("vault login at %s as role '%s' failed: HTTP %d: %s", url, role, refused.StatusCode, reason)
	case err != nil:
		return auth.Token{}, fmt.Errorf("vault login at %s as role '%s': %w", url, role, err)
	case secret == nil || secret.Auth == nil || secret.Auth.ClientToken == "":
		return auth.Token{}, fmt.Errorf("vault login at %s as role '%s': %w", url, role, errors.New("the answer holds no auth.client_token"))
	}
	t := auth.Token{Value: secret.Auth.ClientToken}
	if secret.Auth.LeaseDuration > 0 {
		t.ExpiresAt = start.Add(time.Duration(secret.Auth.LeaseDuration) * time.Second)
	}
	return t, nil
}
