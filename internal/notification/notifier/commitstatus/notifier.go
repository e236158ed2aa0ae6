package commitstatus

import (
	"context"
	"fmt"
	"strings"

	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// status is one commit status as the hosts share it.
type status struct {
	// key identifies the status among others on the commit: GitHub's and
	// Gitea's context, GitLab's name, Azure DevOps' context name; the
	// Bitbucket hosts take its SHA-1.
	key string
	// name is "<kind>/<name>" of the involved object, for the hosts that
	// show a name next to the key (Bitbucket).
	name        string
	state       string
	description string
}

// host is one Git host's commit status API.
type host interface {
	// latest returns the last status set on sha under key; found is false
	// when there is none.
	latest(ctx context.Context, sha, key string) (s status, found bool, err error)
	// set posts s on sha.
	set(ctx context.Context, sha string, s status) error
	// states returns the host's words for a success and a failure.
	states() (success, failure string)
}

// poster is the Notifier of every commit-status type: the steps are
// Flux's, the host's API does the rest.
type poster struct {
	kind string
	key  string
	host host
	// secrets are masked in errors: a host may quote the request it
	// refused.
	secrets []string
}

// New returns the Notifier of a commit-status type.
func New(o notifier.Options) (notifier.Notifier, error) {
	if o.CommitStatus == "" {
		return nil, fmt.Errorf("%w: %s provider has no commit status key", notifier.ErrInvalidConfig, o.Type)
	}
	var (
		h   host
		err error
	)
	switch o.Type {
	case notificationv1beta3.GitHubProvider:
		h, err = newGitHub(o)
	case notificationv1beta3.GitLabProvider:
		h, err = newGitLab(o)
	case notificationv1beta3.GiteaProvider:
		h, err = newGitea(o)
	case notificationv1beta3.BitbucketProvider:
		h, err = newBitbucket(o)
	case notificationv1beta3.BitbucketServerProvider:
		h, err = newBitbucketServer(o)
	case notificationv1beta3.AzureDevOpsProvider:
		h, err = newAzureDevOps(o)
	default:
		return nil, fmt.Errorf("%w: %q is not a commit status type", notifier.ErrInvalidConfig, o.Type)
	}
	if err != nil {
		return nil, err
	}
	return &poster{kind: o.Type, key: o.CommitStatus, host: h, secrets: o.Secrets()}, nil
}

// Post sets the commit status e asks for, unless the commit already has
// it.
func (p *poster) Post(ctx context.Context, e events.Event) error {
	secrets := p.secrets
	if h, ok := p.host.(interface{ secrets() []string }); ok {
		// A GitHub App's installation tokens are known once sent.
		secrets = h.secrets()
	}
	return notifier.Scrub(p.post(ctx, e), secrets)
}

func (p *poster) post(ctx context.Context, e events.Event) error {
	if e.Reason == progressingReason {
		return nil
	}
	sha, err := Commit(e)
	if err != nil {
		return err
	}
	ok, bad := p.host.states()
	s := status{key: p.key, name: objectName(e), state: ok, description: Description(e)}
	if failed(e) {
		s.state = bad
	}
	cur, found, err := p.host.latest(ctx, sha, s.key)
	if err != nil {
		return fmt.Errorf("reading the %s commit status of %s: %w", p.kind, sha, err)
	}
	if found && cur.sameAs(s) {
		return nil
	}
	if err := p.host.set(ctx, sha, s); err != nil {
		return fmt.Errorf("setting the %s commit status of %s: %w", p.kind, sha, err)
	}
	return nil
}

// objectName is Flux's status name: "<kind>/<name>", lower-case.
func objectName(e events.Event) string {
	return strings.ToLower(e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name)
}

// sameAs reports whether a status already set (s) says what want says:
// same state and description, and same name where the host keeps one.
func (s status) sameAs(want status) bool {
	return s.state == want.state && s.description == want.description && (s.name == "" || s.name == want.name)
}
