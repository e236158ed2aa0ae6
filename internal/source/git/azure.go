package git

import (
	"context"
	"fmt"

	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/auth/azure"
)

// UseAzureDevOps makes a present an Entra access token of id for Azure
// DevOps (scope azure.ScopeDevOps), from p through s's cache, as the
// HTTP bearer token in place of any username, password or token the
// Secret has (provider azure, as Flux sends it); the Secret's CA and
// client certificate still apply. The Entra call goes through a.Proxy
// when set, as Flux's does. The error names the token call, never a
// token.
func (a *Auth) UseAzureDevOps(ctx context.Context, p *azure.Provider, s *auth.Settings, id auth.Identity) error {
	if a.scheme == schemeSSH {
		return invalidf("provider 'azure' authenticates over HTTPS: the repository URL is ssh")
	}
	if a.Proxy != nil {
		s = s.WithProxy(a.Proxy.url)
	}
	tok, err := p.AccessToken(ctx, id, s, azure.ScopeDevOps)
	if err != nil {
		return fmt.Errorf("failed to get access token for Git repository: %w", err)
	}
	a.username, a.password, a.bearerToken = "", "", tok.Value
	return nil
}
