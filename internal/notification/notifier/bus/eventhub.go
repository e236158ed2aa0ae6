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

// ScopeEventHubs is the Entra scope of the token a workload identity
// puts on the namespace's $cbs node, as Flux asks for it.
const ScopeEventHubs = "https://eventhubs.azure.net/.default"

// eventHubPublisher sends events to one event hub, authorized as Flux
// documents it: either the address is a connection string with a shared
// access key and the hub's EntityPath (SAS), or the address is the hub's
// name, the channel its namespace and the token a JWT: the Secret's, or,
// without one, an Entra token of the Provider's identity (workload
// identity: spec.serviceAccountName, the lockdown default, or the
// controller's own).
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
	sas := strings.HasPrefix(o.Address, sasPrefix)
	if err := checkEventHubAuth(o, sas); err != nil {
		return nil, err
	}
	switch {
	case sas:
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
		return nil, need(o, "an address (a connection string, or the event hub's name)", "")
	case o.Token == "" && o.Identity == nil:
		return nil, fmt.Errorf("%w: azureeventhub without a token needs an address that is a connection "+
			"string (%s…), or a cloud identity to get one", notifier.ErrInvalidConfig, sasPrefix)
	default:
		if err := need(o, "a channel (the Event Hubs namespace)", o.Channel); err != nil {
			return nil, err
		}
		p.hub, p.namespace = o.Address, fullyQualified(o.Channel)
	}
	return p, nil
}

// checkEventHubAuth refuses two ways of authorizing at once, with Flux's
// words.
func checkEventHubAuth(o notifier.Options, sas bool) error {
	var conflict string
	switch {
	case sas && o.ServiceAccountName != "":
		conflict = "serviceAccountName and SAS authentication cannot be set at the same time"
	case sas && o.Token != "":
		conflict = "jwt token and SAS authentication cannot be set at the same time"
	case o.ServiceAccountName != "" && o.Token != "":
		conflict = "serviceAccountName and jwt token authentication cannot be set at the same time"
	default:
		return nil
	}
	return fmt.Errorf("%w: azureeventhub: invalid authentication options: %s", notifier.ErrInvalidConfig, conflict)
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
	client, hub, err := p.client(ctx)
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
func (p *eventHubPublisher) client(ctx context.Context) (*azeventhubs.ProducerClient, string, error) {
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
	token := staticToken{value: p.opts.Token, expires: time.Now().Add(time.Hour)}
	if token.value == "" {
		// Fetched once for the delivery, as Flux does; the identity's
		// cache keeps it for the next one.
		t, err := p.opts.Identity.AzureToken(ctx, ScopeEventHubs)
		if err != nil {
			return nil, p.hub, fmt.Errorf("getting an Entra token for Azure Event Hubs: %w", err)
		}
		token = staticToken{value: t.Value, expires: t.ExpiresAt}
	}
	c, err := azeventhubs.NewProducerClient(p.namespace, p.hub, token,
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

// staticToken hands a JWT (the Secret's, or the identity's Entra token)
// to the SDK, which puts it on the namespace's $cbs node as a token of
// type jwt. The SDK renews a token before it expires; a delivery's client
// lives far shorter than either.
type staticToken struct {
	value   string
	expires time.Time
}

func (t staticToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: t.value, ExpiresOn: t.expires}, nil
}
