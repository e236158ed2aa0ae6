package auth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FeatureGate is the gate that lets objects name a ServiceAccount whose
// identity reaches the cloud, under the name Flux's controllers accept.
const FeatureGate = "ObjectLevelWorkloadIdentity"

// ErrObjectLevelDisabled is returned when an object names a ServiceAccount
// for a cloud provider and the gate is off. Its text is Flux's.
var ErrObjectLevelDisabled = fmt.Errorf("%s feature gate is not enabled", FeatureGate)

// Token is a credential obtained from a cloud or from the API server, and
// when it stops being valid. For registries Username goes with Value as
// the basic-auth pair the registry's token exchange answers with.
type Token struct {
	Username  string
	Value     string
	ExpiresAt time.Time
}

// String keeps a Token's Value out of any %v: it shows the expiry only.
func (t Token) String() string {
	return fmt.Sprintf("auth.Token{expires %s}", t.ExpiresAt.UTC().Format(time.RFC3339))
}

// GoString keeps a Token's Value out of any %#v.
func (t Token) GoString() string { return t.String() }

// Identity says whose credentials a cloud call presents.
type Identity struct {
	// ServiceAccount is the object's ServiceAccount (object-level workload
	// identity); nil is the controller's own identity.
	ServiceAccount *types.NamespacedName
}

// ObjectLevel reports whether the identity is an object's ServiceAccount.
func (i Identity) ObjectLevel() bool { return i.ServiceAccount != nil }

// String names the identity for cache keys and messages: "controller" or
// "serviceaccount/<namespace>/<name>".
func (i Identity) String() string {
	if i.ServiceAccount == nil {
		return "controller"
	}
	return "serviceaccount/" + i.ServiceAccount.Namespace + "/" + i.ServiceAccount.Name
}

// Settings are what a controller's flags and gates say about identity.
type Settings struct {
	// ObjectLevel is the ObjectLevelWorkloadIdentity gate.
	ObjectLevel bool
	// DefaultServiceAccount is the lockdown default (--default-service-account
	// for sources, image and notification controllers,
	// --default-decryption-service-account or
	// --default-kubeconfig-service-account for their consumers): with the
	// gate on, an object that names no ServiceAccount uses this one in its
	// own namespace instead of the controller's identity.
	DefaultServiceAccount string
	// Client creates ServiceAccount tokens, and reads ServiceAccounts when
	// Reader is nil.
	Client client.Client
	// Reader, when set, reads ServiceAccounts (a controller passes its
	// uncached API reader: its cache may be filtered by
	// --watch-label-selector).
	Reader client.Reader
	// Cache keeps exchanged tokens; nil exchanges every time.
	Cache *Cache
	// Proxy, when set, carries the exchanges' cloud calls: the object's
	// spec.proxySecretRef (see WithProxy). Nil is the environment's proxy.
	Proxy *url.URL
}

// IdentityFor decides the identity of an object in namespace that names
// serviceAccountName (empty when it names none), as Flux's auth package
// does: a named ServiceAccount needs the gate (ErrObjectLevelDisabled);
// with the gate on and a default set, an object naming none uses the
// default; otherwise the controller's own identity.
func (s *Settings) IdentityFor(namespace, serviceAccountName string) (Identity, error) {
	name := serviceAccountName
	if name == "" && s != nil && s.ObjectLevel {
		name = s.DefaultServiceAccount
	}
	if name == "" {
		return Identity{}, nil
	}
	if s == nil || !s.ObjectLevel {
		return Identity{}, ErrObjectLevelDisabled
	}
	return Identity{ServiceAccount: &types.NamespacedName{Namespace: namespace, Name: name}}, nil
}

// ServiceAccount reads the identity's ServiceAccount, whose annotations
// name the cloud identity it maps to (an IAM role ARN, a GCP service
// account, an Azure client id).
func (s *Settings) ServiceAccount(ctx context.Context, id Identity) (*corev1.ServiceAccount, error) {
	if !id.ObjectLevel() {
		return nil, errors.New("the controller's identity has no ServiceAccount to read")
	}
	if s == nil || s.Client == nil {
		return nil, errors.New("no Kubernetes client to read ServiceAccounts with")
	}
	var reader client.Reader = s.Client
	if s.Reader != nil {
		reader = s.Reader
	}
	var sa corev1.ServiceAccount
	if err := reader.Get(ctx, *id.ServiceAccount, &sa); err != nil {
		return nil, fmt.Errorf("failed to get service account '%s/%s': %w", id.ServiceAccount.Namespace, id.ServiceAccount.Name, err)
	}
	return &sa, nil
}

// tokenLifetime is what ServiceAccountToken asks for: the API server's
// default for projected tokens, and what Flux requests.
const tokenLifetime = time.Hour

// ServiceAccountToken asks the API server for a token of the identity's
// ServiceAccount bound to audiences (the TokenRequest API, which the
// controller's RBAC must allow: create on serviceaccounts/token). An
// object-level exchange presents it to the cloud's STS as the web
// identity.
func (s *Settings) ServiceAccountToken(ctx context.Context, id Identity, audiences ...string) (Token, error) {
	sa, err := s.ServiceAccount(ctx, id)
	if err != nil {
		return Token{}, err
	}
	req := &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{
		Audiences:         audiences,
		ExpirationSeconds: ptr.To(int64(tokenLifetime.Seconds())),
	}}
	if err := s.Client.SubResource("token").Create(ctx, sa, req); err != nil {
		return Token{}, fmt.Errorf("failed to create kubernetes token for service account '%s/%s': %w", sa.Namespace, sa.Name, err)
	}
	return Token{Value: req.Status.Token, ExpiresAt: req.Status.ExpirationTimestamp.Time}, nil
}
