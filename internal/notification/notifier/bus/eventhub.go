package bus

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azeventhubs/v2"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// sasPrefix opens an Event Hubs connection string: the SAS form of the
// address, as Flux tells it apart.
const sasPrefix = "Endpoint=sb://"

// eventHubsDomain completes a namespace name given without its domain.
const eventHubsDomain = ".servicebus.windows.net"

// eventHubPublisher sends events to one event hub, authorized as Flux
// documents it: either the address is a connection string with a shared
// access key and the hub's EntityPath (SAS), or the Secret's token is a
// JWT, the address the hub's name and the channel its namespace.
type eventHubPublisher struct {
	opts notifier.Options
	// conn is the SAS connection string; namespace and hub the JWT form's.
	conn           string
	namespace, hub string
	// key is the connection string's shared access key, for scrubbing.
	key string
}

func newEventHub(o notifier.Options) (notifier.Notifier, error) {
	p := &eventHubPublisher{opts: o}
	switch {
	case o.Token != "":
		if err := need(o, "an address (the event hub's name)", o.Address); err != nil {
			return nil, err
		}
		if err := need(o, "a channel (the Event Hubs namespace)", o.Channel); err != nil {
			return nil, err
		}
		p.hub, p.namespace = o.Address, fullyQualified(o.Channel)
	case strings.HasPrefix(o.Address, sasPrefix):
		props, err := azeventhubs.ParseConnectionString(o.Address)
		if err != nil {
			// The SDK's message names no part of the string.
			return nil, fmt.Errorf("%w: azureeventhub address is not a valid connection string: %w",
				notifier.ErrInvalidConfig, err)
		}
		if props.SharedAccessKey != nil {
			p.key = *props.SharedAccessKey
		}
		if props.EntityPath == nil || *props.EntityPath == "" {
			return nil, fmt.Errorf("%w: azureeventhub connection string has no EntityPath (the event hub)",
				notifier.ErrInvalidConfig)
		}
		p.conn = o.Address
	case o.Address == "":
		return nil, need(o, "an address (a connection string, or with a token the event hub's name)", "")
	default:
		return nil, fmt.Errorf("%w: azureeventhub without a token needs an address that is a connection "+
			"string (%s…); workload identity (serviceAccountName) is not supported yet", notifier.ErrInvalidConfig,
			sasPrefix)
	}
	return p, nil
}

// fullyQualified is a namespace's host: the name Flux takes in channel
// gets the Event Hubs domain; a host (with a dot, or a port) is kept.
func fullyQualified(ns string) string {
	if strings.ContainsAny(ns, ".:") {
		return ns
	}
	return ns + eventHubsDomain
}

func (p *eventHubPublisher) Post(ctx context.Context, e events.Event) error {
	s := secrets(p.opts)
	if p.key != "" {
		s = append(s, p.key, p.opts.Address)
	}
	return notifier.Scrub(p.post(ctx, e), s)
}

func (p *eventHubPublisher) post(ctx context.Context, e events.Event) error {
	body, err := payload(e)
	if err != nil {
		return err
	}
	client, hub, err := p.client()
	if err != nil {
		return err
	}
	defer func() {
		// Closing waits on the service; bound it apart from a spent ctx.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = client.Close(cctx)
	}()
	batch, err := client.NewEventDataBatch(ctx, nil)
	if err != nil {
		return fmt.Errorf("connecting to Azure Event Hub %s: %w", hub, eventHubError(ctx, err))
	}
	// The event JSON alone, no properties, as Flux sends it.
	if err := batch.AddEventData(&azeventhubs.EventData{Body: body}, nil); err != nil {
		return fmt.Errorf("adding the event for Azure Event Hub %s: %w", hub, err)
	}
	if err := client.SendEventDataBatch(ctx, batch, nil); err != nil {
		return fmt.Errorf("sending to Azure Event Hub %s: %w", hub, eventHubError(ctx, err))
	}
	return nil
}

// client returns a producer for the hub, named in errors by it.
func (p *eventHubPublisher) client() (*azeventhubs.ProducerClient, string, error) {
	if p.conn != "" {
		props, _ := azeventhubs.ParseConnectionString(p.conn)
		hub := *props.EntityPath
		c, err := azeventhubs.NewProducerClientFromConnectionString(p.conn, "",
			p.clientOptions(props.FullyQualifiedNamespace))
		if err != nil {
			return nil, hub, fmt.Errorf("%w: azureeventhub connection string: %w", notifier.ErrInvalidConfig, err)
		}
		return c, hub, nil
	}
	c, err := azeventhubs.NewProducerClient(p.namespace, p.hub, staticToken(p.opts.Token),
		p.clientOptions(p.namespace))
	if err != nil {
		return nil, p.hub, fmt.Errorf("creating the Azure Event Hub client: %w", err)
	}
	return c, p.hub, nil
}

// clientOptions trusts the Provider's CA (certSecretRef), checking the
// certificate against the namespace's host without its port.
func (p *eventHubPublisher) clientOptions(host string) *azeventhubs.ProducerClientOptions {
	// Three tries a second, two and four apart, rather than the SDK's four
	// minutes of back-off: the Provider's timeout (15s) bounds them, and a
	// refused connection is then reported as such, not as a deadline.
	o := &azeventhubs.ProducerClientOptions{RetryOptions: azeventhubs.RetryOptions{
		MaxRetries: 3, RetryDelay: time.Second, MaxRetryDelay: 4 * time.Second}}
	var cfg *tls.Config
	if p.opts.HTTPClient != nil {
		if t, ok := p.opts.HTTPClient.Transport.(*http.Transport); ok && t.TLSClientConfig != nil {
			cfg = t.TLSClientConfig.Clone()
		}
	}
	if cfg == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if cfg.ServerName == "" {
		cfg.ServerName = host
		if h, _, err := net.SplitHostPort(host); err == nil {
			cfg.ServerName = h
		}
	}
	o.TLSConfig = cfg
	return o
}

// eventHubError says "timed out" rather than the SDK's retry story when
// the delivery's deadline passed.
func eventHubError(ctx context.Context, err error) error {
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return fmt.Errorf("timed out: %w", err)
	}
	return err
}

// staticToken hands the Secret's JWT to the SDK, which puts it on the
// namespace's $cbs node as a token of type jwt.
type staticToken string

func (t staticToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	// The SDK renews a token before it expires; a static one never does.
	return azcore.AccessToken{Token: string(t), ExpiresOn: time.Now().Add(time.Hour)}, nil
}
