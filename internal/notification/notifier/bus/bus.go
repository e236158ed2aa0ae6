package bus

import (
	"encoding/json"
	"fmt"
	"net/url"

	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// Types are the Provider types this package delivers to.
var Types = []string{
	notificationv1beta3.NATSProvider, notificationv1beta3.GooglePubSubProvider, notificationv1beta3.OTELProvider,
	notificationv1beta3.AzureEventHubProvider,
}

// New returns the Notifier of a bus type, after checking the Provider
// carries what the service needs.
func New(o notifier.Options) (notifier.Notifier, error) {
	switch o.Type {
	case notificationv1beta3.NATSProvider:
		return newNATS(o)
	case notificationv1beta3.GooglePubSubProvider:
		return newPubSub(o)
	case notificationv1beta3.OTELProvider:
		return newOTel(o)
	case notificationv1beta3.AzureEventHubProvider:
		return newEventHub(o)
	default:
		return nil, fmt.Errorf("%w: %q is not an event-bus type", notifier.ErrInvalidConfig, o.Type)
	}
}

// need fails when a field the type needs is empty.
func need(o notifier.Options, field, value string) error {
	if value == "" {
		return fmt.Errorf("%w: %s provider needs %s", notifier.ErrInvalidConfig, o.Type, field)
	}
	return nil
}

// payload is what nats, googlepubsub and azureeventhub publish: the event as the event
// server received it, in JSON, as Flux sends it.
func payload(e events.Event) ([]byte, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encoding event: %w", err)
	}
	return b, nil
}

// secrets are o's credentials and the password of an address carrying
// one in its userinfo, for scrubbing.
func secrets(o notifier.Options) []string {
	s := o.Secrets()
	if u, err := url.Parse(o.Address); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			s = append(s, p)
		}
	}
	return s
}
