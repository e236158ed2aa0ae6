package registry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/auth/aws"
	"github.com/weir-gitops/weir/internal/auth/azure"
	"github.com/weir-gitops/weir/internal/auth/gcp"
)

// ErrUnsupportedProvider is a provider weir has no registry login for
// (yet): consumers stall on it rather than retry.
var ErrUnsupportedProvider = errors.New("unsupported provider")

// Login returns the credentials with which id pulls image (an image or
// repository reference, with or without oci://) from provider's registry.
// The error does not name the provider: callers wrap it with Flux's
// message for their kind ("failed to get credential from ...").
func Login(ctx context.Context, provider, image string, id auth.Identity, s *auth.Settings) (authn.Authenticator, error) {
	host, err := Host(image)
	if err != nil {
		return nil, err
	}
	var t auth.Token
	switch provider {
	case aws.ProviderName:
		t, err = aws.RegistryLogin(ctx, s, id, host)
	case gcp.ProviderName:
		t, err = gcp.Default.RegistryLogin(ctx, host, id, s)
	case azure.ProviderName:
		t, err = azure.Default.RegistryLogin(ctx, host, id, s)
	default:
		return nil, fmt.Errorf("%w: provider '%s' is not supported yet by weir; use 'generic' with a Secret", ErrUnsupportedProvider, provider)
	}
	if err != nil {
		return nil, err
	}
	return &login{host: host, auth: authn.AuthConfig{Username: t.Username, Password: t.Value}}, nil
}

// Host is the registry host of image, as Flux reads it: a bare host is
// itself; anything with a path is parsed as a reference.
func Host(image string) (string, error) {
	s := strings.TrimSuffix(strings.TrimPrefix(image, "oci://"), "/")
	if !strings.ContainsRune(s, '/') {
		return s, nil
	}
	ref, err := name.ParseReference(s)
	if err != nil {
		return "", fmt.Errorf("failed to parse artifact repository '%s': %w", image, err)
	}
	return ref.Context().RegistryStr(), nil
}

// login is a registry login whose String names the host only.
type login struct {
	host string
	auth authn.AuthConfig
}

func (l *login) Authorization() (*authn.AuthConfig, error) {
	c := l.auth
	return &c, nil
}

func (l *login) String() string   { return "registry login for " + l.host }
func (l *login) GoString() string { return l.String() }

// Keychain answers with a for host and anonymous access elsewhere, for
// clients that take a keychain (internal/source/oci).
func Keychain(host string, a authn.Authenticator) authn.Keychain {
	return &hostKeychain{host: host, auth: a}
}

type hostKeychain struct {
	host string
	auth authn.Authenticator
}

func (k *hostKeychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	if target.RegistryStr() == k.host {
		return k.auth, nil
	}
	return authn.Anonymous, nil
}

func (k *hostKeychain) String() string   { return "login for " + k.host }
func (k *hostKeychain) GoString() string { return k.String() }
