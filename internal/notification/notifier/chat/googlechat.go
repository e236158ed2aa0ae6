package chat

import (
	"net/http"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// googleChatMessage is a card message of Google Chat's incoming webhooks.
type googleChatMessage struct {
	Cards []googleChatCard `json:"cards"`
}

type googleChatCard struct {
	Header   googleChatHeader    `json:"header"`
	Sections []googleChatSection `json:"sections"`
}

type googleChatHeader struct {
	Title    string `json:"title"`
	Subtitle string `json:"subtitle"`
}

type googleChatSection struct {
	Header  string             `json:"header,omitempty"`
	Widgets []googleChatWidget `json:"widgets"`
}

type googleChatWidget struct {
	TextParagraph *googleChatText     `json:"textParagraph,omitempty"`
	KeyValue      *googleChatKeyValue `json:"keyValue,omitempty"`
}

type googleChatText struct {
	Text string `json:"text"`
}

type googleChatKeyValue struct {
	TopLabel string `json:"topLabel"`
	Content  string `json:"content"`
}

func googleChat(o notifier.Options, e events.Event) (request, error) {
	if err := need(o, "an address (the webhook URL)", o.Address); err != nil {
		return request{}, err
	}
	card := googleChatCard{
		Header:   googleChatHeader{Title: notifier.ObjectID(e), Subtitle: e.ReportingController},
		Sections: []googleChatSection{{Widgets: []googleChatWidget{{TextParagraph: &googleChatText{Text: e.Message}}}}},
	}
	if fields := notifier.Fields(e); len(fields) > 0 {
		s := googleChatSection{Header: "Metadata"}
		for _, f := range fields {
			s.Widgets = append(s.Widgets, googleChatWidget{KeyValue: &googleChatKeyValue{TopLabel: f.Key, Content: f.Value}})
		}
		card.Sections = append(card.Sections, s)
	}
	return request{method: http.MethodPost, address: o.Address, body: googleChatMessage{Cards: []googleChatCard{card}}}, nil
}
