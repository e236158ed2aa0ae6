package eventserver

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// errUnsupportedType marks a Provider type weir does not deliver to yet.
var errUnsupportedType = errors.New("provider type not supported by weir")

// signatureHeader carries the generic-hmac signature: "sha256=" and the
// hex HMAC-SHA256 of the body keyed with the Secret's token.
const signatureHeader = "X-Signature"

// componentHeader names the reporting controller on generic webhooks, so a
// receiver can tell source-controller's events from helm-controller's.
const componentHeader = "Gotk-Component"

// webhookType reports whether buildRequest knows the Provider type.
func webhookType(kind string) bool {
	switch kind {
	case notificationv1beta3.GenericProvider, notificationv1beta3.GenericHMACProvider,
		notificationv1beta3.SlackProvider, notificationv1beta3.DiscordProvider,
		notificationv1beta3.RocketProvider, notificationv1beta3.AlertManagerProvider:
		return true
	}
	return false
}

// buildRequest encodes e for the target's type and addresses it.
func buildRequest(ctx context.Context, t *target, e events.Event) (*http.Request, error) {
	switch t.kind {
	case notificationv1beta3.GenericProvider, notificationv1beta3.GenericHMACProvider:
		return genericRequest(ctx, t, e)
	case notificationv1beta3.SlackProvider:
		return slackRequest(ctx, t, t.address, e, true)
	case notificationv1beta3.DiscordProvider:
		// Discord takes Slack's payload on its webhook's /slack endpoint.
		addr := strings.TrimSuffix(t.address, "/")
		if !strings.HasSuffix(addr, "/slack") {
			addr += "/slack"
		}
		return slackRequest(ctx, t, addr, e, false)
	case notificationv1beta3.RocketProvider:
		// Rocket.Chat's incoming webhooks take Slack's payload.
		return slackRequest(ctx, t, t.address, e, false)
	case notificationv1beta3.AlertManagerProvider:
		return alertmanagerRequest(ctx, t, e)
	default:
		return nil, fmt.Errorf("%w: %q", errUnsupportedType, t.kind)
	}
}

func genericRequest(ctx context.Context, t *target, e events.Event) (*http.Request, error) {
	body, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encoding event: %w", err)
	}
	req, err := newJSONRequest(ctx, t.address, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set(componentHeader, e.ReportingController)
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	if t.kind == notificationv1beta3.GenericHMACProvider {
		if t.token == "" {
			return nil, fmt.Errorf("generic-hmac provider needs the %q key in its secret", secretKeyToken)
		}
		req.Header.Set(signatureHeader, sign(t.token, body))
	}
	return req, nil
}

// sign returns the generic-hmac signature of body.
func sign(token string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// slackPayload is the incoming-webhook message: one attachment per event,
// coloured by severity, the event's metadata as fields.
type slackPayload struct {
	Channel     string            `json:"channel,omitempty"`
	Username    string            `json:"username,omitempty"`
	Attachments []slackAttachment `json:"attachments"`
}

type slackAttachment struct {
	Color      string       `json:"color"`
	AuthorName string       `json:"author_name"`
	Text       string       `json:"text"`
	MrkdwnIn   []string     `json:"mrkdwn_in"`
	Fields     []slackField `json:"fields,omitempty"`
}

type slackField struct {
	Title string `json:"title"`
	Value string `json:"value"`
	Short bool   `json:"short"`
}

// newSlackPayload renders e: the author line names the object as
// "<kind>/<name>.<namespace>", the colour is "danger" for errors and
// "good" otherwise. The username defaults to the reporting controller.
func newSlackPayload(channel, username string, e events.Event) slackPayload {
	if username == "" {
		username = e.ReportingController
	}
	color := "good"
	if e.Severity == events.SeverityError {
		color = "danger"
	}
	o := e.InvolvedObject
	att := slackAttachment{
		Color:      color,
		AuthorName: fmt.Sprintf("%s/%s.%s", strings.ToLower(o.Kind), o.Name, o.Namespace),
		Text:       e.Message,
		MrkdwnIn:   []string{"text"},
	}
	keys := make([]string, 0, len(e.Metadata))
	for k := range e.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		att.Fields = append(att.Fields, slackField{Title: k, Value: e.Metadata[k]})
	}
	return slackPayload{Channel: channel, Username: username, Attachments: []slackAttachment{att}}
}

// slackRequest posts the Slack payload. A Slack bot token, when the
// Secret has one, authenticates chat.postMessage; Discord takes none.
func slackRequest(ctx context.Context, t *target, address string, e events.Event, bearer bool) (*http.Request, error) {
	body, err := json.Marshal(newSlackPayload(t.channel, t.username, e))
	if err != nil {
		return nil, fmt.Errorf("encoding slack payload: %w", err)
	}
	req, err := newJSONRequest(ctx, address, body)
	if err != nil {
		return nil, err
	}
	if bearer && t.token != "" {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	return req, nil
}

func newJSONRequest(ctx context.Context, address string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, address, bytes.NewReader(body))
	if err != nil {
		// The URL error would quote the address and its credentials.
		return nil, fmt.Errorf("building request to %s: invalid address", redactAddress(address))
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}
