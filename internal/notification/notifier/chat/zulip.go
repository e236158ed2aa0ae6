package chat

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// zulipMessagesPath is the endpoint of Zulip's "send a message" API; Flux
// posts there whatever path the address has.
const zulipMessagesPath = "/api/v1/messages"

// zulip sends a stream message, form-encoded as Zulip's API wants it, to
// the server at the address: spec.channel is "<channel>/<topic>", and the
// bot's email and API key (username and password) authenticate as basic
// auth.
func zulip(o notifier.Options, e events.Event) (request, error) {
	if err := need(o, "an address (the Zulip server's URL)", o.Address); err != nil {
		return request{}, err
	}
	u, err := url.Parse(o.Address)
	if err != nil || u.Host == "" {
		return request{}, fmt.Errorf("%w: zulip provider address is not a URL", notifier.ErrInvalidConfig)
	}
	stream, topic, ok := strings.Cut(o.Channel, "/")
	if !ok || stream == "" || topic == "" {
		return request{}, fmt.Errorf("%w: zulip provider needs a channel of the form <channel>/<topic>, got %q",
			notifier.ErrInvalidConfig, o.Channel)
	}
	if err := need(o, "a username (the bot's email)", o.Username); err != nil {
		return request{}, err
	}
	if err := need(o, "the password key in its secret (the bot's API key)", o.Password); err != nil {
		return request{}, err
	}
	u.Path, u.RawPath = zulipMessagesPath, ""
	r, _ := http.NewRequest(http.MethodPost, "/", nil)
	r.SetBasicAuth(o.Username, o.Password)
	form := url.Values{"type": {"stream"}, "to": {stream}, "topic": {topic}, "content": {statusMarkdown(e)}}
	return request{method: http.MethodPost, address: u.String(), header: http.Header{"Authorization": r.Header["Authorization"]},
		form: form}, nil
}

// statusMarkdown is the Markdown post Flux writes where a service renders
// Markdown: a "Flux Status" heading, a warning or information sign with
// the object as "<Kind>/<namespace>/<name>", the message, and the metadata
// as a list sorted by key.
func statusMarkdown(e events.Event) string {
	sign := "ℹ️"
	if e.Severity == events.SeverityError {
		sign = "⚠️"
	}
	o := e.InvolvedObject
	var b strings.Builder
	fmt.Fprintf(&b, "## Flux Status\n\n%s %s/%s/%s\n\n%s\n\nMetadata:\n", sign, o.Kind, o.Namespace, o.Name, e.Message)
	for _, f := range notifier.Fields(e) {
		fmt.Fprintf(&b, "* `%s`: %s\n", f.Key, f.Value)
	}
	return b.String()
}
