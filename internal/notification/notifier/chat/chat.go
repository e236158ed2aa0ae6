package chat

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// Types are the Provider types this package delivers to.
var Types = []string{
	notificationv1beta3.MSTeamsProvider, notificationv1beta3.GoogleChatProvider, notificationv1beta3.WebexProvider,
	notificationv1beta3.TelegramProvider, notificationv1beta3.MatrixProvider, notificationv1beta3.LarkProvider,
	notificationv1beta3.ZulipProvider, notificationv1beta3.ZoomProvider,
}

// payloadFunc renders an event as one service's request: method, address
// and body, with the headers the service wants.
type payloadFunc func(o notifier.Options, e events.Event) (request, error)

type request struct {
	method  string
	address string
	header  http.Header
	// body is sent as JSON, unless form is set.
	body any
	form url.Values
}

// service is the Notifier of one chat type.
type service struct {
	opts    notifier.Options
	payload payloadFunc
}

// New returns the Notifier of a chat type, after checking the Provider
// carries what the service needs.
func New(o notifier.Options) (notifier.Notifier, error) {
	var p payloadFunc
	switch o.Type {
	case notificationv1beta3.MSTeamsProvider:
		p = msTeams
	case notificationv1beta3.GoogleChatProvider:
		p = googleChat
	case notificationv1beta3.WebexProvider:
		p = webex
	case notificationv1beta3.TelegramProvider:
		p = telegram
	case notificationv1beta3.MatrixProvider:
		p = matrix
	case notificationv1beta3.LarkProvider:
		p = lark
	case notificationv1beta3.ZulipProvider:
		p = zulip
	case notificationv1beta3.ZoomProvider:
		p = zoom
	default:
		return nil, fmt.Errorf("%w: %q is not a chat type", notifier.ErrInvalidConfig, o.Type)
	}
	// Render a sample once: a Provider missing its token or channel fails
	// here, with the field to fix, rather than on every event.
	if _, err := p(o, events.Event{}); err != nil {
		return nil, err
	}
	return &service{opts: o, payload: p}, nil
}

func (s *service) Post(ctx context.Context, e events.Event) error {
	r, err := s.payload(s.opts, e)
	if err != nil {
		return err
	}
	if r.form != nil {
		err = notifier.Send(ctx, s.opts.HTTPClient, r.method, r.address, "application/x-www-form-urlencoded",
			[]byte(r.form.Encode()), r.header)
	} else {
		err = notifier.PostJSON(ctx, s.opts.HTTPClient, r.method, r.address, r.body, r.header)
	}
	return notifier.Scrub(err, s.opts.Secrets())
}

// need fails when a field the type needs is empty.
func need(o notifier.Options, field, value string) error {
	if value == "" {
		return fmt.Errorf("%w: %s provider needs %s", notifier.ErrInvalidConfig, o.Type, field)
	}
	return nil
}

func bearer(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}
