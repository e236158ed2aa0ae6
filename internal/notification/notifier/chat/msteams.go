package chat

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// office365Suffix marks the host of a retired Office 365 connector, which
// takes a MessageCard; any other address is a Workflows webhook, which
// takes an Adaptive Card.
const office365Suffix = ".webhook.office.com"

type teamsMessage struct {
	Type        string            `json:"type"`
	Attachments []teamsAttachment `json:"attachments"`
}

type teamsAttachment struct {
	ContentType string       `json:"contentType"`
	Content     adaptiveCard `json:"content"`
}

type adaptiveCard struct {
	Schema  string          `json:"$schema"`
	Type    string          `json:"type"`
	Version string          `json:"version"`
	Body    []adaptiveBlock `json:"body"`
}

// adaptiveBlock is a TextBlock or a FactSet.
type adaptiveBlock struct {
	Type   string         `json:"type"`
	Text   string         `json:"text,omitempty"`
	Size   string         `json:"size,omitempty"`
	Weight string         `json:"weight,omitempty"`
	Color  string         `json:"color,omitempty"`
	Wrap   bool           `json:"wrap,omitempty"`
	Facts  []adaptiveFact `json:"facts,omitempty"`
}

type adaptiveFact struct {
	Title string `json:"title"`
	Value string `json:"value"`
}

type messageCard struct {
	Type       string         `json:"@type"`
	Context    string         `json:"@context"`
	ThemeColor string         `json:"themeColor"`
	Summary    string         `json:"summary"`
	Sections   []messageCardS `json:"sections"`
}

type messageCardS struct {
	ActivityTitle    string            `json:"activityTitle"`
	ActivitySubtitle string            `json:"activitySubtitle"`
	Facts            []messageCardFact `json:"facts"`
}

type messageCardFact struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func msTeams(o notifier.Options, e events.Event) (request, error) {
	if err := need(o, "an address (the webhook URL)", o.Address); err != nil {
		return request{}, err
	}
	u, err := url.Parse(o.Address)
	if err == nil && strings.HasSuffix(u.Hostname(), office365Suffix) {
		return request{method: http.MethodPost, address: o.Address, body: newMessageCard(e)}, nil
	}
	return request{method: http.MethodPost, address: o.Address, body: newAdaptiveCard(e)}, nil
}

func newAdaptiveCard(e events.Event) teamsMessage {
	color := "good"
	if e.Severity == events.SeverityError {
		color = "attention"
	}
	body := []adaptiveBlock{
		{Type: "TextBlock", Text: notifier.ObjectID(e), Size: "large", Weight: "bolder", Color: color, Wrap: true},
		{Type: "TextBlock", Text: e.Message, Wrap: true},
	}
	if fields := notifier.Fields(e); len(fields) > 0 {
		facts := make([]adaptiveFact, 0, len(fields))
		for _, f := range fields {
			facts = append(facts, adaptiveFact{Title: f.Key, Value: f.Value})
		}
		body = append(body, adaptiveBlock{Type: "FactSet", Facts: facts})
	}
	return teamsMessage{Type: "message", Attachments: []teamsAttachment{{
		ContentType: "application/vnd.microsoft.card.adaptive",
		Content: adaptiveCard{Schema: "http://adaptivecards.io/schemas/adaptive-card.json", Type: "AdaptiveCard",
			Version: "1.4", Body: body},
	}}}
}

func newMessageCard(e events.Event) messageCard {
	color := "0076D7"
	if e.Severity == events.SeverityError {
		color = "FF0000"
	}
	facts := []messageCardFact{}
	for _, f := range notifier.Fields(e) {
		facts = append(facts, messageCardFact{Name: f.Key, Value: f.Value})
	}
	return messageCard{
		Type: "MessageCard", Context: "http://schema.org/extensions", ThemeColor: color, Summary: notifier.ObjectID(e),
		Sections: []messageCardS{{ActivityTitle: notifier.ObjectID(e), ActivitySubtitle: e.Message, Facts: facts}},
	}
}
