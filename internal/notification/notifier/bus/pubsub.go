package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"golang.org/x/oauth2"
	"google.golang.org/api/option"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// emulatorHostEnv is the variable Google's Pub/Sub client reads to reach
// an emulator (gcloud's, or the client's own pstest fake) without TLS or
// credentials. The client applies it itself; an emulator checks no
// credentials, so none are sent to it.
const emulatorHostEnv = "PUBSUB_EMULATOR_HOST"

// pubSubPublisher publishes events on one topic: address is the GCP
// project ID, channel the topic ID, the Secret's token the JSON
// credentials (without one, the access tokens of the Provider's cloud
// identity: its ServiceAccount through Google STS, or the controller's
// application default credentials) and its headers the message
// attributes.
type pubSubPublisher struct {
	opts  notifier.Options
	creds []option.ClientOption
}

func newPubSub(o notifier.Options) (notifier.Notifier, error) {
	if err := need(o, "an address (the GCP project ID)", o.Address); err != nil {
		return nil, err
	}
	if err := need(o, "a channel (the Pub/Sub topic ID)", o.Channel); err != nil {
		return nil, err
	}
	p := &pubSubPublisher{opts: o}
	switch {
	case os.Getenv(emulatorHostEnv) != "":
	case o.Token != "":
		c, err := credentialsOption(o.Token)
		if err != nil {
			return nil, err
		}
		p.creds = []option.ClientOption{c}
	case o.Identity != nil:
		// Workload identity: the Provider's ServiceAccount, the lockdown
		// default or the controller's own, asked when the client first
		// needs a token.
		p.creds = []option.ClientOption{option.WithTokenSource(gcpTokenSource{ctx: context.Background(), id: o.Identity})}
	}
	p.creds = append(p.creds, PubSubClientOptions...)
	return p, nil
}

// PubSubClientOptions are added to every Pub/Sub client's options. Only
// tests set them (this package's, and those that deliver through a
// Provider to internal/devenv/testenv/cloudfake/gcpfake's PubSub), to
// reach a TLS fake that checks the bearer token (an emulator takes none).
var PubSubClientOptions []option.ClientOption

// gcpTokenSource gives Google's client the identity's access tokens.
type gcpTokenSource struct {
	ctx context.Context
	id  notifier.CloudIdentity
}

func (s gcpTokenSource) Token() (*oauth2.Token, error) {
	t, err := s.id.GCPToken(s.ctx)
	if err != nil {
		return nil, fmt.Errorf("getting a Google access token for Pub/Sub: %w", err)
	}
	return &oauth2.Token{AccessToken: t.Value, TokenType: "Bearer", Expiry: t.ExpiresAt}, nil
}

// credentialsOption checks the token is JSON credentials of a type Google
// documents, and says which: the client refuses to guess it. The error
// never quotes the token.
func credentialsOption(token string) (option.ClientOption, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal([]byte(token), &head); err != nil {
		return nil, fmt.Errorf("%w: googlepubsub token is not JSON credentials", notifier.ErrInvalidConfig)
	}
	switch t := option.CredentialsType(head.Type); t {
	case option.ServiceAccount, option.AuthorizedUser, option.ExternalAccount, option.ImpersonatedServiceAccount:
		return option.WithAuthCredentialsJSON(t, []byte(token)), nil
	default:
		return nil, fmt.Errorf("%w: googlepubsub token has credentials of type %q, want service_account, "+
			"authorized_user, external_account or impersonated_service_account", notifier.ErrInvalidConfig, head.Type)
	}
}

func (p *pubSubPublisher) Post(ctx context.Context, e events.Event) error {
	return notifier.Scrub(p.post(ctx, e), secrets(p.opts))
}

func (p *pubSubPublisher) post(ctx context.Context, e events.Event) (err error) {
	body, err := payload(e)
	if err != nil {
		return err
	}
	topic := "projects/" + p.opts.Address + "/topics/" + p.opts.Channel
	client, err := pubsub.NewClient(ctx, p.opts.Address, p.creds...)
	if err != nil {
		return fmt.Errorf("connecting to Pub/Sub for topic %s: %w", topic, err)
	}
	defer func() {
		if cerr := client.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("closing Pub/Sub client: %w", cerr)
		}
	}()
	pub := client.Publisher(p.opts.Channel)
	// The publisher sends from its own context; bound it by the
	// delivery's, or Stop waits out its default minute.
	if d, ok := ctx.Deadline(); ok {
		pub.PublishSettings.Timeout = time.Until(d)
	}
	defer pub.Stop()
	var attrs map[string]string
	if len(p.opts.Headers) > 0 {
		attrs = p.opts.Headers
	}
	if _, err := pub.Publish(ctx, &pubsub.Message{Data: body, Attributes: attrs}).Get(ctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("publishing to Pub/Sub topic %s: timed out", topic)
		}
		return fmt.Errorf("publishing to Pub/Sub topic %s: %w", topic, err)
	}
	return nil
}
