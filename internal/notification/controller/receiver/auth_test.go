package receiver

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv/oidcissuer"
)

func bearer(tok string) http.Header { return headers("Authorization", "Bearer "+tok) }

// TestGenericOIDC verifies tokens against a real issuer on 127.0.0.1:
// discovery, keys, issuer, audience, expiry, then the provider's CEL
// variables and validations.
func TestGenericOIDC(t *testing.T) {
	iss := oidcissuer.Start(t)
	foreign := oidcissuer.Start(t) // signs with a key iss does not publish
	provider := notificationv1.OIDCProvider{
		IssuerURL: iss.URL, Audience: "flux",
		Variables: []notificationv1.OIDCVariable{{Name: "allowed", Expression: `['org/app', 'org/' + 'lib']`}},
		Validations: []notificationv1.OIDCValidation{
			{Expression: `claims.repository in vars.allowed`, Message: "repository not allowed"},
			{Expression: `claims.?ref.orValue('') == 'refs/heads/main'`, Message: "only main may deploy"},
		},
	}
	good := map[string]any{"repository": "org/app", "ref": "refs/heads/main"}
	withDefaultAudience := provider
	withDefaultAudience.Audience = ""
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()

	tests := []struct {
		name      string
		providers []notificationv1.OIDCProvider
		header    http.Header
		want      error  // nil or the sentinel errors.Is must match
		message   string // substring of the error
	}{
		{"valid", nil, bearer(iss.Sign(t, iss.Claims("flux", good))), nil, ""},
		{"default audience", []notificationv1.OIDCProvider{withDefaultAudience},
			bearer(iss.Sign(t, iss.Claims("notification-controller", good))), nil, ""},
		{"no header", nil, http.Header{}, errUnauthenticated, "the Authorization header is missing or malformed"},
		{"basic auth", nil, headers("Authorization", "Basic eDp5"), errUnauthenticated, "missing or malformed"},
		{"empty bearer", nil, headers("Authorization", "Bearer  "), errUnauthenticated, "missing a bearer token"},
		{"not a JWT", nil, bearer("opaque"), errUnauthenticated, "token is not a JWT"},
		{"unknown issuer", nil, bearer(foreign.Sign(t, foreign.Claims("flux", good))), errUnauthenticated,
			`no oidcProvider configured for issuer "` + foreign.URL + `"`},
		{"wrong audience", nil, bearer(iss.Sign(t, iss.Claims("other", good))), errUnauthenticated, `expected audience "flux"`},
		{"expired", nil, bearer(iss.Sign(t, iss.Claims("flux", merge(good, map[string]any{
			"exp": time.Now().Add(-time.Minute).Unix(), "iat": time.Now().Add(-time.Hour).Unix()})))), errUnauthenticated, "token is expired"},
		{"signed by another key", nil, bearer(foreign.Sign(t, merge(iss.Claims("flux", good), map[string]any{"iss": iss.URL}))),
			errUnauthenticated, "failed to verify"},
		{"one validation fails", nil, bearer(iss.Sign(t, iss.Claims("flux", map[string]any{"repository": "org/app", "ref": "refs/heads/dev"}))),
			errNotAuthorised, "token validation failed: only main may deploy"},
		{"every failure is listed", nil, bearer(iss.Sign(t, iss.Claims("flux", map[string]any{"repository": "evil/app"}))),
			errNotAuthorised, "token validation failed: repository not allowed; only main may deploy"},
		{"missing claim", nil, bearer(iss.Sign(t, iss.Claims("flux", nil))), errNotAuthorised, "failed to evaluate validation \"repository not allowed\""},
		{"issuer down", []notificationv1.OIDCProvider{{IssuerURL: downURL, Validations: provider.Validations}},
			bearer(iss.Sign(t, merge(iss.Claims("notification-controller", good), map[string]any{"iss": downURL}))),
			errIssuerUnavailable, "discovery of"},
	}
	tokens := newTokenVerifier()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			providers := tt.providers
			if providers == nil {
				providers = []notificationv1.OIDCProvider{provider}
			}
			spec := &notificationv1.ReceiverSpec{Type: notificationv1.GenericOIDCReceiver, OIDCProviders: providers}
			v, err := validate(context.Background(), check{req: request{header: tt.header}, spec: spec, tokens: tokens})
			if tt.want == nil {
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				if v.claims["repository"] != "org/app" || v.claims["iss"] != iss.URL {
					t.Errorf("claims = %v", v.claims)
				}
				return
			}
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.message) {
				t.Fatalf("error = %v, want %v containing %q", err, tt.want, tt.message)
			}
			if auth := tt.header.Get("Authorization"); len(auth) > 20 && strings.Contains(err.Error(), auth[7:]) {
				t.Errorf("error echoes the token: %v", err)
			}
		})
	}
	// Eight tokens were verified: the discovery document and the keys are
	// read once, and the keys again for the unknown key ID (go-oidc may
	// race one more fetch while it fills its cache).
	if n := iss.Fetches(); n < 3 || n > 4 {
		t.Errorf("issuer documents fetched %d times, want 3 (discovery, keys, keys again for an unknown key)", n)
	}
}

func merge(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// pubsub is a Pub/Sub push body wrapping data.
func pubsub(data string) []byte {
	return []byte(`{"message":{"data":"` + base64.StdEncoding.EncodeToString([]byte(data)) +
		`","messageId":"136969346945","publishTime":"2026-12-04T10:00:00Z"},"subscription":"projects/p/subscriptions/flux"}`)
}

// TestGCR verifies Pub/Sub push tokens as Flux 2.9 does, against a local
// issuer standing in for accounts.google.com.
func TestGCR(t *testing.T) {
	iss := oidcissuer.Start(t)
	const email, audience = "push@project.iam.gserviceaccount.com", "https://flux.example.com/hook/x"
	secret := map[string][]byte{tokenKey: []byte("t"), emailKey: []byte(email), audienceKey: []byte(audience)}
	event := `{"action":"INSERT","digest":"gcr.io/p/app@sha256:0a1b","tag":"gcr.io/p/app:v1"}`
	claims := map[string]any{"email": email, "email_verified": true}
	tests := []struct {
		name   string
		header http.Header
		body   []byte
		want   error
		msg    string
	}{
		{"valid", bearer(iss.Sign(t, iss.Claims(audience, claims))), pubsub(event), nil, ""},
		{"no token", http.Header{}, pubsub(event), errUnauthenticated, "the Authorization header is missing or malformed"},
		{"wrong audience", bearer(iss.Sign(t, iss.Claims("https://elsewhere", claims))), pubsub(event), errUnauthenticated, "expected audience"},
		{"wrong email", bearer(iss.Sign(t, iss.Claims(audience, map[string]any{"email": "x@evil.example", "email_verified": true}))),
			pubsub(event), errUnauthenticated, "token email is 'x@evil.example', want '" + email + "'"},
		{"email not verified", bearer(iss.Sign(t, iss.Claims(audience, map[string]any{"email": email}))),
			pubsub(event), errUnauthenticated, "is not verified"},
		{"expired", bearer(iss.Sign(t, iss.Claims(audience, merge(claims, map[string]any{"exp": time.Now().Add(-time.Second).Unix()})))),
			pubsub(event), errUnauthenticated, "token is expired"},
		{"not JSON", bearer(iss.Sign(t, iss.Claims(audience, claims))), []byte("nope"), errBadPayload, "cannot decode GCR webhook payload"},
		{"data not an event", bearer(iss.Sign(t, iss.Claims(audience, claims))), pubsub("nope"), errBadPayload, "cannot decode GCR webhook body"},
	}
	tokens := newTokenVerifier()
	tokens.gcrIssuer = iss.URL
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := &notificationv1.ReceiverSpec{Type: notificationv1.GCRReceiver}
			v, err := validate(context.Background(), check{req: request{header: tt.header, body: tt.body}, secret: secret, spec: spec, tokens: tokens})
			if tt.want == nil {
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				if string(v.body) != event {
					t.Errorf("body for filters = %s, want the unwrapped event %s", v.body, event)
				}
				return
			}
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error = %v, want %v containing %q", err, tt.want, tt.msg)
			}
		})
	}
}

// cdEvent is a CDEvents v0.4 pipelineRun.queued event, with changes.
func cdEventBody(change func(string) string) []byte {
	s := `{"context":{"specversion":"0.4.1","id":"271069a8-fc18-44f1-b38f-9d70a1695819","source":"/event/source/123",` +
		`"type":"dev.cdevents.pipelinerun.queued.0.2.0","timestamp":"2023-03-20T14:27:05.315384Z"},` +
		`"subject":{"id":"mySubject123","source":"/event/source/123","type":"pipelineRun",` +
		`"content":{"pipelineName":"myPipeline","url":"https://www.example.com/mySubject123"}}}`
	if change != nil {
		s = change(s)
	}
	return []byte(s)
}

func TestCDEvents(t *testing.T) {
	replace := func(from, to string) func(string) string {
		return func(s string) string { return strings.Replace(s, from, to, 1) }
	}
	ce := headers("Ce-Type", "dev.cdevents.pipelinerun.queued.0.2.0")
	tests := []struct {
		name   string
		body   []byte
		header http.Header
		events []string
		want   error
		msg    string
	}{
		{"valid", cdEventBody(nil), ce, nil, nil, ""},
		{"event listed", cdEventBody(nil), ce, []string{"DEV.cdevents.pipelinerun.queued.0.2.0"}, nil, ""},
		{"newer minor of the event", cdEventBody(replace("queued.0.2.0", "queued.0.3.1")), ce, nil, nil, ""},
		{"custom event", cdEventBody(replace("dev.cdevents.pipelinerun.queued.0.2.0", "dev.cdeventsx.mytool-resource.created.0.1.0")), ce, nil, nil, ""},
		{"event not listed", cdEventBody(nil), ce, []string{"dev.cdevents.build.started.0.2.0"}, errEventNotAccepted, "is not authorised"},
		{"not JSON", []byte("nope"), ce, nil, errBadPayload, "unable to validate CDEvent event"},
		{"no context", []byte(`{"subject":{"id":"x","content":{}}}`), ce, nil, errBadPayload, "'context' and 'subject' are required"},
		{"spec 0.3", cdEventBody(replace(`"specversion":"0.4.1"`, `"specversion":"0.3.0"`)), ce, nil, errBadPayload, "is not a 0.4 release"},
		{"unknown type", cdEventBody(replace("pipelinerun.queued", "pipelinerun.exploded")), ce, nil, errBadPayload, "unknown event type"},
		{"other major version", cdEventBody(replace("queued.0.2.0", "queued.1.0.0")), ce, nil, errBadPayload, "not compatible"},
		{"not a CDEvents type", cdEventBody(replace("dev.cdevents.pipelinerun.queued.0.2.0", "com.example.build")), ce, nil, errBadPayload, "is not a CDEvents type"},
		{"bad timestamp", cdEventBody(replace("2023-03-20T14:27:05.315384Z", "yesterday")), ce, nil, errBadPayload, "context.timestamp"},
		{"no id", cdEventBody(replace(`"id":"271069a8-fc18-44f1-b38f-9d70a1695819",`, "")), ce, nil, errBadPayload, "context.id is required"},
		{"no subject id", cdEventBody(replace(`"id":"mySubject123",`, "")), ce, nil, errBadPayload, "subject.id is required"},
		{"content not an object", cdEventBody(replace(`"content":{"pipelineName":"myPipeline","url":"https://www.example.com/mySubject123"}`, `"content":"x"`)),
			ce, nil, errBadPayload, "subject.content must be an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := run(notificationv1.CDEventsReceiver, tt.header, tt.body, "t", tt.events)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				return
			}
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error = %v, want %v containing %q", err, tt.want, tt.msg)
			}
		})
	}
}

func TestValidationCodes(t *testing.T) {
	for _, tt := range []struct {
		err  error
		code int
	}{
		{errUnauthenticated, http.StatusUnauthorized},
		{errIssuerUnavailable, http.StatusServiceUnavailable},
		{errNotAuthorised, http.StatusBadRequest},
		{errEventNotAccepted, http.StatusBadRequest},
		{errBadPayload, http.StatusBadRequest},
		{errUnsupportedType, http.StatusNotImplemented},
	} {
		if got := validationCode(errors.Join(errors.New("x"), tt.err)); got != tt.code {
			t.Errorf("%v: code %d, want %d", tt.err, got, tt.code)
		}
	}
}

func TestCheckOIDCProviders(t *testing.T) {
	v := []notificationv1.OIDCValidation{{Expression: "true", Message: "m"}}
	for _, tt := range []struct {
		name      string
		providers []notificationv1.OIDCProvider
		want      string
	}{
		{"valid", []notificationv1.OIDCProvider{{IssuerURL: "https://a", Validations: v}, {IssuerURL: "http://b", Validations: v}}, ""},
		{"none", nil, "at least one oidcProvider"},
		{"no issuer", []notificationv1.OIDCProvider{{Validations: v}}, "issuerURL is required"},
		{"bad issuer", []notificationv1.OIDCProvider{{IssuerURL: "token.example.com", Validations: v}}, "must start with http:// or https://"},
		{"duplicate", []notificationv1.OIDCProvider{{IssuerURL: "https://a", Validations: v}, {IssuerURL: "https://a", Validations: v}}, "duplicate issuerURL"},
		{"no validations", []notificationv1.OIDCProvider{{IssuerURL: "https://a"}}, "at least one validation is required"},
		{"unnamed variable", []notificationv1.OIDCProvider{{IssuerURL: "https://a", Validations: v,
			Variables: []notificationv1.OIDCVariable{{Expression: "1"}}}}, "variables[0]: name and expression are required"},
		{"validation without message", []notificationv1.OIDCProvider{{IssuerURL: "https://a",
			Validations: []notificationv1.OIDCValidation{{Expression: "true"}}}}, "validations[0]: expression and message are required"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := checkOIDCProviders(tt.providers)
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("error = %v, want %q", err, tt.want)
			}
		})
	}
}

// FuzzUnverifiedIssuer feeds untrusted bearer tokens to the parsing that
// runs before any verification: it must not panic.
func FuzzUnverifiedIssuer(f *testing.F) {
	f.Add("a.eyJpc3MiOiJodHRwczovL3gifQ.c")
	f.Add("..")
	f.Add("a.!!!.c")
	f.Fuzz(func(t *testing.T, raw string) {
		iss, err := unverifiedIssuer(raw)
		if err == nil && iss == "" {
			t.Fatal("empty issuer accepted")
		}
		_, _ = bearerToken(headers("Authorization", "Bearer "+raw))
		_ = checkCDEvent([]byte(raw))
	})
}
