package notifier

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/auth/githubapp"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// Notifier posts events to one service.
type Notifier interface {
	// Post delivers e. An error means the service did not take it.
	Post(ctx context.Context, e events.Event) error
}

// Options is a Provider resolved against its Secrets: everything a
// Notifier needs to reach its service. It carries credentials: never log
// it or put it in an error.
type Options struct {
	// Type is the Provider's spec.type.
	Type string
	// Address is spec.address, or the Secret's address key.
	Address string
	// Channel and Username are spec.channel and spec.username (the
	// Secret's username key wins).
	Channel  string
	Username string
	// Token and Password are the Secret's token and password keys.
	Token    string
	Password string
	// CommitStatus is the key of the commit status to set (commitStatusExpr
	// evaluated, or Flux's default), for the commit-status types.
	CommitStatus string
	// Headers is the Secret's headers key: extra HTTP headers, or the
	// message attributes of an event bus.
	Headers map[string]string
	// Alert is the Alert the event is delivered for: otel names its
	// service and its traces after it.
	Alert AlertRef
	// Reader reads the event's object and what it links to (otel places
	// the object under its Kustomization and source); nil reads nothing.
	Reader client.Reader
	// GitHubApp holds the Secret's GitHub App credentials, for the GitHub
	// types, which then need no token.
	GitHubApp *githubapp.App
	// ProviderUID is the Provider's UID: the change-request comment types
	// mark their comments with it.
	ProviderUID string
	// HTTPClient carries the Provider's timeout, CA and proxy.
	HTTPClient *http.Client
	// ServiceAccountName is the Provider's spec.serviceAccountName: the
	// types that accept workload identity (WorkloadIdentityTypes) refuse
	// it beside a static credential, as Flux does.
	ServiceAccountName string
	// Identity gives those types the access tokens of the Provider's
	// identity when its Secret holds no credential; nil gives none.
	Identity CloudIdentity
}

// WorkloadIdentityTypes are the Provider types that, without a credential
// in their Secret, present a cloud identity (spec.serviceAccountName, the
// lockdown default, or the controller's own), as in Flux.
var WorkloadIdentityTypes = []string{"azureeventhub", "azuredevops", "googlepubsub"}

// CloudIdentity is a Provider's cloud identity: the ServiceAccount it
// names (object-level workload identity, behind the
// ObjectLevelWorkloadIdentity gate), the lockdown default, or the
// controller's own. Tokens are secrets.
type CloudIdentity interface {
	// AzureToken returns an Entra access token for scope.
	AzureToken(ctx context.Context, scope string) (auth.Token, error)
	// GCPToken returns a Google access token.
	GCPToken(ctx context.Context) (auth.Token, error)
}

// AlertRef names an Alert.
type AlertRef struct {
	Namespace, Name, UID string
}

// ErrInvalidConfig marks a Provider a Notifier cannot be built from: the
// error says which field to fix. Retrying the same event cannot help.
var ErrInvalidConfig = errors.New("invalid provider")

// Secrets returns the credentials in o, for scrubbing from errors a
// service may have echoed them in.
func (o Options) Secrets() []string {
	var out []string
	for _, s := range []string{o.Token, o.Password} {
		if s != "" {
			out = append(out, s)
		}
	}
	return append(out, o.GitHubApp.Secrets()...)
}

// Scrub returns err with every secret masked, keeping its chain for
// errors.Is: a service may quote the request it refused, and errors go to
// logs.
func Scrub(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	masked := msg
	for _, s := range secrets {
		masked = strings.ReplaceAll(masked, s, "*****")
	}
	if masked == msg {
		return err
	}
	return scrubbedError{msg: masked, err: err}
}

// scrubbedError shows only the masked text of the error it wraps.
type scrubbedError struct {
	msg string
	err error
}

func (e scrubbedError) Error() string { return e.msg }
func (e scrubbedError) Unwrap() error { return e.err }
