package eventserver

import (
	"context"
	"slices"

	"github.com/weir-gitops/weir/internal/auth"
	authazure "github.com/weir-gitops/weir/internal/auth/azure"
	authgcp "github.com/weir-gitops/weir/internal/auth/gcp"
	"github.com/weir-gitops/weir/internal/notification/notifier"
)

// providerIdentity is a Provider's cloud identity, decided as Flux's
// notification-controller decides it, when a token is first needed: the
// ServiceAccount spec.serviceAccountName names in the Provider's
// namespace (refused while the ObjectLevelWorkloadIdentity gate is off),
// or with the gate on the lockdown default (--default-service-account),
// else the controller's own identity. Its tokens come from internal/auth's
// exchanges and cache, shared with every other consumer.
type providerIdentity struct {
	settings                      *auth.Settings
	namespace, serviceAccountName string
}

func (p providerIdentity) identity() (auth.Identity, error) {
	return p.settings.IdentityFor(p.namespace, p.serviceAccountName)
}

// AzureToken exchanges the identity for an Entra token for scope.
func (p providerIdentity) AzureToken(ctx context.Context, scope string) (auth.Token, error) {
	id, err := p.identity()
	if err != nil {
		return auth.Token{}, err
	}
	return authazure.Default.AccessToken(ctx, id, p.settings, scope)
}

// GCPToken exchanges the identity for a Google access token.
func (p providerIdentity) GCPToken(ctx context.Context) (auth.Token, error) {
	id, err := p.identity()
	if err != nil {
		return auth.Token{}, err
	}
	return authgcp.Default.AccessToken(ctx, id, p.settings)
}

// cloudIdentity is t's identity for the types that accept workload
// identity, nil for the others.
func (t *target) cloudIdentity(s *auth.Settings) notifier.CloudIdentity {
	if !slices.Contains(notifier.WorkloadIdentityTypes, t.kind) {
		return nil
	}
	return providerIdentity{settings: s, namespace: t.namespace, serviceAccountName: t.serviceAccountName}
}
