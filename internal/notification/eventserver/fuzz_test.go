package eventserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/weir-gitops/weir/internal/runtime/events"
)

// FuzzEvent feeds untrusted request bodies through everything that runs
// before the API is consulted, and through the payload encoders.
func FuzzEvent(f *testing.F) {
	seed, _ := json.Marshal(sampleEvent())
	f.Add(seed)
	f.Add([]byte(`{"involvedObject":{"kind":"K","name":"n","namespace":"ns","apiVersion":"/"},"severity":"info","metadata":{"/":""}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var e events.Event
		if json.Unmarshal(body, &e) != nil || validateEvent(&e) != nil {
			return
		}
		e.Metadata = normalizeMetadata(&e)
		_ = rateLimitKey(&e)
		_, _ = messagePasses([]string{"a"}, []string{"b"}, e.Message)
		for _, kind := range []string{"generic", "generic-hmac", "slack", "discord", "alertmanager"} {
			if _, err := buildRequest(context.Background(), &target{kind: kind, address: "http://h", token: "t"}, e); err != nil {
				t.Errorf("%s: %v", kind, err)
			}
		}
	})
}
