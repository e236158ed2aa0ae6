package gcp

import (
	"context"
	"fmt"
	"regexp"
	"sync"

	"github.com/weir-gitops/weir/internal/auth"
)

// RegistryUsername is the username that goes with an access token.
const RegistryUsername = "oauth2accesstoken"

const registryPattern = `^(((.+\.)?gcr\.io)|(.+-docker\.pkg\.dev))$`

// Compiled on first use: bounded repetitions compile to a large program
// that every process would otherwise build at start (design 0038).
var registryRegex = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(registryPattern) })

// ParseRegistry checks registry (a host) is Artifact Registry's or GCR's,
// with Flux's message when it is not.
func ParseRegistry(registry string) error {
	if !registryRegex().MatchString(registry) {
		return fmt.Errorf("invalid GCP registry: '%s'. must match %s", registry, registryPattern)
	}
	return nil
}

// RegistryLogin returns the login to registry for id: the access token as
// the password of RegistryUsername. The token does not depend on the
// registry, so every registry shares one cached token.
func (p *Provider) RegistryLogin(ctx context.Context, registry string, id auth.Identity, s *auth.Settings) (auth.Token, error) {
	if err := ParseRegistry(registry); err != nil {
		return auth.Token{}, err
	}
	t, err := p.AccessToken(ctx, id, s)
	if err != nil {
		return auth.Token{}, err
	}
	t.Username = RegistryUsername
	return t, nil
}
