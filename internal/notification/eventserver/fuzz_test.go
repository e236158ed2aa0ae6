package eventserver

import (
	"context"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/weir-gitops/weir/internal/notification/notifier/commitstatus"

	"github.com/weir-gitops/weir/internal/runtime/events"
)

// FuzzEvent feeds untrusted request bodies through everything that runs
// before the API is consulted, and through the payload encoders.
func FuzzEvent(f *testing.F) {
	seed, _ := json.Marshal(sampleEvent())
	f.Add(seed)
	f.Add([]byte(`{"involvedObject":{"kind":"K","name":"n","namespace":"ns","apiVersion":"/"},"severity":"info","metadata":{"/":""}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"involvedObject":{"kind":"Kustomization","name":"a","namespace":"b"},"severity":"error","reason":"ÄbcDEFgh\u0000X","metadata":{"revision":"x@sha1:@sha256:/","originRevision":"main/5394cb7f48332b2de7c17dd8b8384bbc84b7e738"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var e events.Event
		if json.Unmarshal(body, &e) != nil || validateEvent(&e) != nil {
			return
		}
		md := splitMetadata(&e)
		_ = rateLimitKey(&e, md)
		e.Metadata, _ = md.withoutInternal().merged("s", map[string]string{"summary": "x"})
		_, _ = messagePasses([]string{"a"}, []string{"b"}, e.Message)
		for _, kind := range []string{"generic", "generic-hmac", "slack", "discord", "alertmanager"} {
			if _, err := buildRequest(context.Background(), &target{kind: kind, address: "http://h", token: "t"}, e); err != nil {
				t.Errorf("%s: %v", kind, err)
			}
		}
		// The commit status a hostile event would set: a description a
		// host takes, a commit that is a hash or an error.
		_ = commitstatus.Wants(e)
		if d := commitstatus.Description(e); !utf8.ValidString(d) || utf8.RuneCountInString(d) > 140 {
			t.Errorf("description %q", d)
		}
		if sha, err := commitstatus.Commit(e); err == nil && len(sha) != 40 && len(sha) != 64 {
			t.Errorf("commit %q", sha)
		}
		_ = commitstatus.DefaultKey(e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message)
	})
}
