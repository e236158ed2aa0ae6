package chat

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// zoomMessage is the rich message of Zoom Team Chat's incoming webhook,
// taken when the webhook is called with format=full.
type zoomMessage struct {
	Content zoomContent `json:"content"`
}

type zoomContent struct {
	Head zoomHead   `json:"head"`
	Body []zoomItem `json:"body"`
}

type zoomHead struct {
	Text    string   `json:"text"`
	SubHead *zoomSub `json:"sub_head,omitempty"`
}

type zoomSub struct {
	Text string `json:"text"`
}

// zoomItem is a message or a list of fields.
type zoomItem struct {
	Type  string      `json:"type"`
	Text  string      `json:"text,omitempty"`
	Items []zoomField `json:"items,omitempty"`
}

type zoomField struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// zoom posts to the incoming webhook at the address: the object as the
// head, the severity under it, the message, and the metadata as fields.
// The webhook's verification token goes bare in the Authorization header.
func zoom(o notifier.Options, e events.Event) (request, error) {
	if err := need(o, "an address (the incoming webhook URL)", o.Address); err != nil {
		return request{}, err
	}
	if err := need(o, "the token key in its secret (the webhook's verification token)", o.Token); err != nil {
		return request{}, err
	}
	u, err := url.Parse(o.Address)
	if err != nil || u.Host == "" {
		return request{}, fmt.Errorf("%w: zoom provider address is not a URL", notifier.ErrInvalidConfig)
	}
	if q := u.Query(); q.Get("format") == "" {
		// The rich message format, unless the address names another.
		q.Set("format", "full")
		u.RawQuery = q.Encode()
	}
	body := []zoomItem{{Type: "message", Text: e.Message}}
	if fields := notifier.Fields(e); len(fields) > 0 {
		items := make([]zoomField, 0, len(fields))
		for _, f := range fields {
			items = append(items, zoomField{Key: f.Key, Value: f.Value})
		}
		body = append(body, zoomItem{Type: "fields", Items: items})
	}
	msg := zoomMessage{Content: zoomContent{
		Head: zoomHead{Text: notifier.ObjectID(e), SubHead: &zoomSub{Text: e.Severity}},
		Body: body,
	}}
	return request{method: http.MethodPost, address: u.String(), header: http.Header{"Authorization": {o.Token}}, body: msg}, nil
}
