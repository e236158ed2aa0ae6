package eventserver

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/bus"
	"github.com/weir-gitops/weir/internal/notification/notifier/chat"
	"github.com/weir-gitops/weir/internal/notification/notifier/commitstatus"
	"github.com/weir-gitops/weir/internal/notification/notifier/gitcomment"
	"github.com/weir-gitops/weir/internal/notification/notifier/incident"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// newNotifier returns the Notifier of t's type, posting through c. A
// type weir does not deliver to is an error, never a silent drop.
func newNotifier(t *target, c *http.Client) (notifier.Notifier, error) {
	switch {
	case webhookType(t.kind):
		return &webhook{target: t, client: c}, nil
	case notificationv1beta3.IsCommitStatusProvider(t.kind):
		return commitstatus.New(t.options(c))
	case slices.Contains(chat.Types, t.kind):
		return chat.New(t.options(c))
	case slices.Contains(incident.Types, t.kind):
		return incident.New(t.options(c))
	case slices.Contains(bus.Types, t.kind):
		return bus.New(t.options(c))
	case slices.Contains(gitcomment.Types, t.kind):
		return gitcomment.New(t.options(c))
	default:
		return nil, fmt.Errorf("%w: %q", errUnsupportedType, t.kind)
	}
}

// supportedType reports whether newNotifier knows the Provider type.
func supportedType(kind string) bool {
	return webhookType(kind) || notificationv1beta3.IsCommitStatusProvider(kind) ||
		slices.Contains(chat.Types, kind) || slices.Contains(incident.Types, kind) ||
		slices.Contains(bus.Types, kind) || slices.Contains(gitcomment.Types, kind)
}

// retried reports whether deliveries to kind are retried as Flux's are:
// the types whose Flux notifiers post through go-retryablehttp (the
// webhooks, chat and incident services, Bitbucket Server). Not sentry,
// whose SDK sends once, nor the Git hosts with clients of their own
// (GitLab's retries by itself).
func retried(kind string) bool {
	switch kind {
	case notificationv1beta3.SentryProvider:
		return false
	case notificationv1beta3.BitbucketServerProvider:
		return true
	}
	return webhookType(kind) || slices.Contains(chat.Types, kind) || slices.Contains(incident.Types, kind)
}

// options hands t to a Notifier.
func (t *target) options(c *http.Client) notifier.Options {
	return notifier.Options{
		Type: t.kind, Address: t.address, Channel: t.channel, Username: t.username,
		Token: t.token, Password: t.password, CommitStatus: t.commitStatus, HTTPClient: c,
		Headers: t.headers, Alert: t.alert, Reader: t.reader,
		GitHubApp: t.githubApp, ProviderUID: t.providerUID,
		ServiceAccountName: t.serviceAccountName, Identity: t.identity,
	}
}

// webhook is the Notifier of the types whose payload this package builds
// (generic, generic-hmac, slack, discord, rocket, alertmanager).
type webhook struct {
	target *target
	client *http.Client
}

func (w *webhook) Post(ctx context.Context, e events.Event) error {
	req, err := buildRequest(ctx, w.target, e)
	if err != nil {
		return err
	}
	return send(w.client, req)
}

// scrubbed is err with every credential of t masked, the proxy's
// password included: the token exchanges' errors come from cloud SDKs
// that may quote the route they took.
func scrubbed(err error, t *target) error {
	secrets := t.options(nil).Secrets()
	if u, perr := t.proxyURL(); perr == nil && u != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			secrets = append(secrets, p, url.QueryEscape(p))
		}
	}
	return notifier.Scrub(err, secrets)
}
