package receiver

import (
	"context"
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // GitHub, Bitbucket and Nexus still sign with HMAC-SHA1
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"strings"

	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
)

// Headers the senders authenticate and describe their requests with.
const (
	headerSignature       = "X-Signature"
	headerHubSignature    = "X-Hub-Signature"
	headerHubSignature256 = "X-Hub-Signature-256"
	headerGitHubEvent     = "X-GitHub-Event"
	headerGitLabToken     = "X-Gitlab-Token"
	headerGitLabEvent     = "X-Gitlab-Event"
	headerBitbucketEvent  = "X-Event-Key"
	headerNexusSignature  = "X-Nexus-Webhook-Signature"
	headerAuthorization   = "Authorization"
)

// githubPing is the event GitHub sends when a webhook is created.
const githubPing = "ping"

// Sentinel errors of request validation; the server maps them to status
// codes. Their messages never carry the token, a signature or the body.
var (
	// errUnauthenticated: the request does not prove knowledge of the token.
	errUnauthenticated = errors.New("request not authenticated")
	// errEventNotAccepted: authentic, but for an event spec.events leaves out.
	errEventNotAccepted = errors.New("event not accepted")
	// errBadPayload: authentic, but the body is not what the sender sends.
	errBadPayload = errors.New("invalid payload")
	// errUnsupportedType: weir does not implement the Receiver's type.
	errUnsupportedType = errors.New("receiver type not supported by weir yet")
	// errNotAuthorised: a verified token whose claims fail the Receiver's
	// validations.
	errNotAuthorised = errors.New("request not authorised")
	// errIssuerUnavailable: the OIDC issuer's discovery document or keys
	// could not be read, so no token can be verified right now.
	errIssuerUnavailable = errors.New("OIDC issuer unavailable")
)

// request is what validation reads of an HTTP request: headers and the
// whole (bounded) body.
type request struct {
	header http.Header
	body   []byte
}

// verdict is the outcome of a valid request.
type verdict struct {
	// event is the sender's event type, when it names one.
	event string
	// ping is true for a GitHub ping: answered, never acted upon.
	ping bool
	// claims are the verified token claims (generic-oidc), which resource
	// filters see as `claims`.
	claims map[string]any
	// body, when set, replaces the request body filters see as `req`: a
	// GCR push carries its event wrapped in a Pub/Sub envelope.
	body []byte
}

// check is what a validator is given: the request, what the Receiver's
// Secret holds, the Receiver's spec, and a verifier of OIDC tokens.
type check struct {
	req    request
	token  string
	secret map[string][]byte
	spec   *notificationv1.ReceiverSpec
	tokens *tokenVerifier
}

// validator checks one kind of sender's request.
type validator func(ctx context.Context, c check) (verdict, error)

// simple adapts a validator that needs only the request, the token and
// spec.events.
func simple(v func(req request, token string, events []string) (verdict, error)) validator {
	return func(_ context.Context, c check) (verdict, error) { return v(c.req, c.token, c.spec.Events) }
}

// validators holds the Receiver types weir implements; the rest are
// reported by the reconciler as not supported.
var validators = map[string]validator{
	notificationv1.GenericReceiver:     simple(validateGeneric),
	notificationv1.GenericHMACReceiver: simple(validateGenericHMAC),
	notificationv1.GenericOIDCReceiver: validateGenericOIDC,
	notificationv1.GitHubReceiver:      simple(validateGitHub),
	notificationv1.GitLabReceiver:      simple(validateGitLab),
	notificationv1.BitbucketReceiver:   simple(validateBitbucket),
	notificationv1.HarborReceiver:      simple(validateHarbor),
	notificationv1.DockerHubReceiver:   simple(jsonPayload),
	notificationv1.QuayReceiver:        simple(jsonPayload),
	notificationv1.GCRReceiver:         validateGCR,
	notificationv1.ACRReceiver:         simple(jsonPayload),
	notificationv1.NexusReceiver:       simple(validateNexus),
	notificationv1.CDEventsReceiver:    simple(validateCDEvents),
}

// Supported reports whether weir serves Receivers of type t.
func Supported(t string) bool {
	_, ok := validators[t]
	return ok
}

// validate runs the validator of the Receiver's type.
func validate(ctx context.Context, c check) (verdict, error) {
	v, ok := validators[c.spec.Type]
	if !ok {
		return verdict{}, fmt.Errorf("%w: '%s'", errUnsupportedType, c.spec.Type)
	}
	return v(ctx, c)
}

// validateGeneric accepts every request: the secret path is the only
// credential.
func validateGeneric(request, string, []string) (verdict, error) { return verdict{}, nil }

// validateGenericHMAC checks X-Signature, "<sha1|sha256|sha512>=<hex>", an
// HMAC of the body keyed with the token.
func validateGenericHMAC(req request, token string, _ []string) (verdict, error) {
	if err := checkSignature(req.header.Get(headerSignature), req.body, token); err != nil {
		return verdict{}, fmt.Errorf("%w: %s header: %w", errUnauthenticated, headerSignature, err)
	}
	return verdict{}, nil
}

// validateGitHub checks X-Hub-Signature-256, or the older X-Hub-Signature
// when it is absent, then the event. A ping is answered whatever
// spec.events says: GitHub sends it when the hook is created, and
// refusing it would show the hook as broken.
func validateGitHub(req request, token string, events []string) (verdict, error) {
	if err := checkHubSignature(req, token); err != nil {
		return verdict{}, err
	}
	event := req.header.Get(headerGitHubEvent)
	if strings.EqualFold(event, githubPing) {
		return verdict{event: event, ping: true}, nil
	}
	return verdict{event: event}, acceptEvent("GitHub", event, events)
}

// validateBitbucket checks X-Hub-Signature the way GitHub's is checked,
// then X-Event-Key.
func validateBitbucket(req request, token string, events []string) (verdict, error) {
	if err := checkHubSignature(req, token); err != nil {
		return verdict{}, err
	}
	event := req.header.Get(headerBitbucketEvent)
	return verdict{event: event}, acceptEvent("Bitbucket server", event, events)
}

// validateGitLab compares X-Gitlab-Token with the token, then checks
// X-Gitlab-Event.
func validateGitLab(req request, token string, events []string) (verdict, error) {
	if !equalSecret(req.header.Get(headerGitLabToken), token) {
		return verdict{}, fmt.Errorf("%w: the %s header value does not match the receiver token", errUnauthenticated, headerGitLabToken)
	}
	event := req.header.Get(headerGitLabEvent)
	return verdict{event: event}, acceptEvent("GitLab", event, events)
}

// validateHarbor compares the Authorization header with the token, as
// Harbor's "Auth Header" setting sends it verbatim.
func validateHarbor(req request, token string, _ []string) (verdict, error) {
	if !equalSecret(req.header.Get(headerAuthorization), token) {
		return verdict{}, fmt.Errorf("%w: the Harbor %s header value does not match the receiver token", errUnauthenticated, headerAuthorization)
	}
	return verdict{}, nil
}

// validateNexus checks X-Nexus-Webhook-Signature, the hex HMAC-SHA1 of the
// body, then that the body is JSON.
func validateNexus(req request, token string, events []string) (verdict, error) {
	sig := req.header.Get(headerNexusSignature)
	if sig == "" {
		return verdict{}, fmt.Errorf("%w: %s header missing", errUnauthenticated, headerNexusSignature)
	}
	if !equalSecret(strings.ToLower(sig), hexHMAC(sha1.New, token, req.body)) {
		return verdict{}, fmt.Errorf("%w: invalid Nexus signature", errUnauthenticated)
	}
	return jsonPayload(req, token, events)
}

// jsonPayload is the only check Flux makes of DockerHub, Quay and ACR
// requests: the body must be a JSON object.
func jsonPayload(req request, _ string, _ []string) (verdict, error) {
	var obj map[string]any
	if err := json.Unmarshal(req.body, &obj); err != nil {
		return verdict{}, fmt.Errorf("%w: the body is not a JSON object", errBadPayload)
	}
	return verdict{}, nil
}

// checkHubSignature verifies GitHub's and Bitbucket Server's signature
// headers, preferring the SHA-256 one.
func checkHubSignature(req request, token string) error {
	name := headerHubSignature256
	sig := req.header.Get(name)
	if sig == "" {
		name = headerHubSignature
		sig = req.header.Get(name)
	}
	if err := checkSignature(sig, req.body, token); err != nil {
		return fmt.Errorf("%w: %s header: %w", errUnauthenticated, name, err)
	}
	return nil
}

// hashes are the HMAC hash functions a "<name>=<hex>" signature may name.
var hashes = map[string]func() hash.Hash{
	"sha1":   sha1.New,
	"sha256": sha256.New,
	"sha512": sha512.New,
}

// checkSignature verifies sig, "<hash>=<hex digest>", as the HMAC of body
// keyed with token, in constant time.
func checkSignature(sig string, body []byte, token string) error {
	if sig == "" {
		return errors.New("missing")
	}
	name, digest, ok := strings.Cut(sig, "=")
	if !ok {
		return errors.New("not in the form <hash>=<hex>")
	}
	h, ok := hashes[strings.ToLower(name)]
	if !ok {
		return fmt.Errorf("unsupported hash function %q", truncate(name))
	}
	want, err := hex.DecodeString(digest)
	if err != nil {
		return errors.New("digest is not hexadecimal")
	}
	mac := hmac.New(h, []byte(token))
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil), want) {
		return errors.New("signature mismatch")
	}
	return nil
}

func hexHMAC(h func() hash.Hash, token string, body []byte) string {
	mac := hmac.New(h, []byte(token))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// equalSecret compares a presented credential with the token in constant
// time. An empty token never matches: a Secret holding an empty token must
// not turn a check into "send no header".
func equalSecret(got, token string) bool {
	if token == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}

// acceptEvent checks event against spec.events, case-insensitively as
// Flux does; an empty list accepts every event.
func acceptEvent(sender, event string, events []string) error {
	if len(events) == 0 {
		return nil
	}
	for _, e := range events {
		if strings.EqualFold(e, event) {
			return nil
		}
	}
	return fmt.Errorf("%w: the %s event %q is not authorised", errEventNotAccepted, sender, truncate(event))
}

// truncate keeps caller-supplied strings short in messages and logs.
func truncate(s string) string {
	const maxLen = 64
	if len(s) > maxLen {
		return s[:maxLen] + "…"
	}
	return s
}
