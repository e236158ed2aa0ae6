package chat

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// Default addresses of the services with one public API.
const (
	webexAPI    = "https://webexapis.com/v1/messages"
	telegramAPI = "https://api.telegram.org"
)

// markdown renders e as Markdown lines: the object in bold, the message,
// then one "key: value" bullet per metadata entry. esc escapes text for
// the service's dialect.
func markdown(e events.Event, esc func(string) string) string {
	var b strings.Builder
	b.WriteString("*" + esc(notifier.ObjectID(e)) + "*\n")
	b.WriteString(esc(e.Message))
	for _, f := range notifier.Fields(e) {
		b.WriteString("\n" + esc("- "+f.Key+": "+f.Value))
	}
	return b.String()
}

func plain(s string) string { return s }

// webex posts a Markdown message to the room named by spec.channel with
// the bot's token.
func webex(o notifier.Options, e events.Event) (request, error) {
	if err := need(o, "a channel (the room ID)", o.Channel); err != nil {
		return request{}, err
	}
	if err := need(o, "the token key in its secret", o.Token); err != nil {
		return request{}, err
	}
	addr := o.Address
	if addr == "" {
		addr = webexAPI
	}
	body := map[string]string{"roomId": o.Channel, "markdown": strings.Replace(markdown(e, plain), "*", "**", 2)}
	return request{method: http.MethodPost, address: addr, header: bearer(o.Token), body: body}, nil
}

// telegramSpecial are the characters MarkdownV2 wants escaped.
const telegramSpecial = "_*[]()~`>#+-=|{}.!\\"

func telegramEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(telegramSpecial, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// telegram calls the Bot API's sendMessage for the chat spec.channel
// names; the token is part of the path.
func telegram(o notifier.Options, e events.Event) (request, error) {
	if err := need(o, "a channel (the chat ID)", o.Channel); err != nil {
		return request{}, err
	}
	if err := need(o, "the token key in its secret", o.Token); err != nil {
		return request{}, err
	}
	base := o.Address
	if base == "" {
		base = telegramAPI
	}
	body := map[string]string{"chat_id": o.Channel, "text": markdown(e, telegramEscape), "parse_mode": "MarkdownV2"}
	return request{method: http.MethodPost, address: strings.TrimSuffix(base, "/") + "/bot" + o.Token + "/sendMessage", body: body}, nil
}

// matrix sends an m.room.message to the room spec.channel names on the
// homeserver at the address. The transaction ID is the event's digest, so
// a retried delivery is not shown twice.
func matrix(o notifier.Options, e events.Event) (request, error) {
	if err := need(o, "an address (the homeserver URL)", o.Address); err != nil {
		return request{}, err
	}
	if err := need(o, "a channel (the room ID)", o.Channel); err != nil {
		return request{}, err
	}
	if err := need(o, "the token key in its secret", o.Token); err != nil {
		return request{}, err
	}
	raw, _ := json.Marshal(e)
	sum := sha256.Sum256(raw)
	addr := strings.TrimSuffix(o.Address, "/") + "/_matrix/client/v3/rooms/" + url.PathEscape(o.Channel) +
		"/send/m.room.message/" + hex.EncodeToString(sum[:16])
	body := map[string]string{"msgtype": "m.text", "body": markdown(e, plain)}
	return request{method: http.MethodPut, address: addr, header: bearer(o.Token), body: body}, nil
}

type larkCard struct {
	MsgType string `json:"msg_type"`
	Card    struct {
		Config struct {
			WideScreenMode bool `json:"wide_screen_mode"`
		} `json:"config"`
		Header struct {
			Title    larkText `json:"title"`
			Template string   `json:"template"`
		} `json:"header"`
		Elements []larkElement `json:"elements"`
	} `json:"card"`
}

type larkText struct {
	Tag     string `json:"tag"`
	Content string `json:"content"`
}

type larkElement struct {
	Tag  string   `json:"tag"`
	Text larkText `json:"text"`
}

// lark posts an interactive card to a custom bot's webhook: red for
// errors, green otherwise.
func lark(o notifier.Options, e events.Event) (request, error) {
	if err := need(o, "an address (the webhook URL)", o.Address); err != nil {
		return request{}, err
	}
	var c larkCard
	c.MsgType = "interactive"
	c.Card.Config.WideScreenMode = true
	c.Card.Header.Title = larkText{Tag: "plain_text", Content: notifier.ObjectID(e)}
	c.Card.Header.Template = "green"
	if e.Severity == events.SeverityError {
		c.Card.Header.Template = "red"
	}
	c.Card.Elements = []larkElement{{Tag: "div", Text: larkText{Tag: "lark_md", Content: markdown(e, plain)}}}
	return request{method: http.MethodPost, address: o.Address, body: c}, nil
}
