package receiver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// gcrEvent is what Container Registry and Artifact Registry publish to
// their Pub/Sub topic, base64-encoded in message.data of the push.
type gcrEvent struct {
	Action string `json:"action"`
	Digest string `json:"digest"`
	Tag    string `json:"tag"`
}

// pubsubPush is the body of a Pub/Sub push request.
type pubsubPush struct {
	Message struct {
		Data        string `json:"data"`
		MessageID   string `json:"messageId"`
		PublishTime string `json:"publishTime"`
	} `json:"message"`
	Subscription string `json:"subscription"`
}

// validateGCR checks a Pub/Sub push as Flux 2.9 does: the Authorization
// header carries a Google-signed ID token for the Secret's audience, whose
// verified email is the Secret's email (the service account the push
// subscription authenticates as). The registry event inside the envelope
// is what resource filters then see as `req`.
func validateGCR(ctx context.Context, c check) (verdict, error) {
	raw, err := bearerToken(c.req.header)
	if err != nil {
		return verdict{}, err
	}
	issuer := c.tokens.gcrIssuer
	if issuer == "" {
		issuer = googleIssuer
	}
	email, audience := string(c.secret[emailKey]), string(c.secret[audienceKey])
	claims, err := c.tokens.verify(ctx, issuer, audience, raw)
	if err != nil {
		return verdict{}, fmt.Errorf("cannot authenticate GCR request: %w", err)
	}
	got, _ := claims["email"].(string)
	if !equalSecret(got, email) {
		return verdict{}, fmt.Errorf("%w: cannot authenticate GCR request: token email is '%s', want '%s'", errUnauthenticated, truncate(got), email)
	}
	if verified, _ := claims["email_verified"].(bool); !verified {
		return verdict{}, fmt.Errorf("%w: cannot authenticate GCR request: token email '%s' is not verified", errUnauthenticated, email)
	}
	var push pubsubPush
	if err := json.Unmarshal(c.req.body, &push); err != nil {
		return verdict{}, fmt.Errorf("%w: cannot decode GCR webhook payload", errBadPayload)
	}
	data, err := base64.StdEncoding.DecodeString(push.Message.Data)
	if err != nil {
		return verdict{}, fmt.Errorf("%w: cannot decode GCR webhook body: message.data is not base64", errBadPayload)
	}
	var ev gcrEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return verdict{}, fmt.Errorf("%w: cannot decode GCR webhook body", errBadPayload)
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return verdict{}, fmt.Errorf("encoding the GCR event: %w", err)
	}
	return verdict{body: body}, nil
}
