// Package receiver implements Flux's Receiver (notification.toolkit.fluxcd.io/v1):
// a reconciler that publishes each Receiver's webhook path, and the webhook
// server that turns authenticated calls into reconcile requests.
//
// The reconciler reads the "token" key of spec.secretRef and sets
// status.webhookPath to /hook/ + hex(sha256(token + name + namespace)),
// with Ready=True, reason Succeeded and Flux's message "Receiver
// initialized for path: /hook/…". A generic-oidc Receiver has no Secret:
// its path is derived from an empty token, as `flux trigger receiver`
// computes it. A missing Secret or key (gcr also needs "email" and
// "audience") leaves Ready False with reason TokenNotFound and Flux's
// messages ("unable to read token from secret '<ns>/<name>' error: Secret
// \"<name>\" not found", "invalid '<ns>/<name>' secret data: required field
// 'token'") and is retried. A spec weir cannot serve is Stalled and has no
// path: a type weir does not know or a secretRef/oidcProviders mismatch
// (ValidationFailed), a resource filter or OIDC expression that does not
// compile (InvalidCELExpression), or, with --no-cross-namespace-refs, a
// resource in another namespace (AccessDenied). The reconciler indexes
// Receivers by status.webhookPath (WebhookPathIndex) in the manager's
// cache, which is how the Server finds the Receiver of a request.
//
// The Server answers POST /hook/<digest>:
//
//   - 404 when no Receiver has that path, or when the token changed since
//     the path was published (the old path stops working at once);
//   - 503 when the Receiver is suspended or not Ready, as Flux does;
//   - 413 when the body exceeds MaxBodyBytes (1 MiB by default);
//   - 401 when the request does not authenticate, 400 when its event is
//     not in spec.events (compared case-insensitively, as Flux does), its
//     payload is not what the sender sends, or a verified OIDC token fails
//     the provider's validations (the message lists the failed ones); 503
//     when the OIDC issuer's discovery document or keys cannot be read;
//   - otherwise every spec.resources entry is resolved (namespace
//     defaulting to the Receiver's, "*" listing the kind in the namespace
//     by matchLabels, namespace "*" meaning all namespaces), filtered by
//     spec.resourceFilter and the entry's filter (CEL over `res`, the
//     object, `req`, the JSON body, and `claims`, the verified token
//     claims of generic-oidc), and each object gets
//     reconcile.fluxcd.io/requestedAt set to the current time (RFC3339Nano)
//     by a JSON merge patch on its metadata; 200 when all succeeded, 500
//     listing the entries that failed.
//
// Tokens and signatures are compared in constant time and never appear in
// responses or logs; neither does the body.
//
// Types: generic (no check), generic-hmac (X-Signature "sha1|sha256|sha512=<hex>"
// HMAC of the body), github (X-Hub-Signature-256, else X-Hub-Signature;
// events from X-GitHub-Event), gitlab (X-Gitlab-Token equals the token;
// events from X-Gitlab-Event), bitbucket (X-Hub-Signature; events from
// X-Event-Key), harbor (Authorization equals the token), nexus
// (X-Nexus-Webhook-Signature, hex HMAC-SHA1 of the body, and a JSON body),
// dockerhub, quay and acr (a JSON body, the only check Flux makes).
//
// gcr: a Pub/Sub push. Its Authorization header carries a Google-signed ID
// token, verified with go-oidc against https://accounts.google.com's
// discovery document and keys: signature, issuer (also the scheme-less
// accounts.google.com), audience (the Secret's "audience"), expiry, then
// the "email" claim equal to the Secret's "email" and email_verified. The
// registry event base64-encoded in message.data ({action, digest, tag}) is
// what filters see as `req`.
//
// generic-oidc: the bearer token's unverified "iss" chooses the entry of
// spec.oidcProviders with that issuerURL; the token is then verified
// against that issuer (discovery, keys; audience defaults to
// "notification-controller") and the entry's CEL variables (in order, as
// `vars.<name>`) and validations run over `claims`; every failed
// validation's message is returned. Discovered issuers and their keys are
// kept in memory, and keys fetched again when a token names an unknown
// key ID.
//
// cdevents: the body must be a CDEvents v0.4 event (context.specversion
// 0.4.x, id, source, an RFC 3339 timestamp, a type the specification
// defines with the same major version, or a custom dev.cdeventsx type;
// subject.id and an object subject.content); the Ce-Type header is
// matched against spec.events. Flux validates with the CDEvents Go SDK,
// which is not on the module proxy weir builds from, so the envelope is
// checked by hand and the per-event content schemas are not.
//
// # What weir leaves out, and differences from Flux
//
//   - Flux answers 400 to every failed validation; weir answers 401 when
//     the request does not authenticate and 503 when the OIDC issuer
//     cannot be reached (a sender retries that), and says why in the body.
//   - Flux discovers the OIDC issuer on every request; weir keeps it.
//   - A GitHub "ping" with a valid signature is answered 200 and nothing
//     is reconciled, even when spec.events leaves it out; Flux treats a
//     ping like any event (refused unless listed, otherwise reconciling).
//   - Only POST is served; Flux answers any method.
//   - Flux writes requestedAt in Go's time.Time String format; weir writes
//     RFC3339Nano, as the flux CLI does.
//   - A resource without apiVersion gets the version the API server
//     prefers for the kind's Flux group, not a fixed table.
//   - With no matchLabels, name "*" selects every object of the kind;
//     Flux refuses the entry.
//   - Changing the token Secret is noticed at the next interval or
//     reconcile request, as in Flux: Secrets are not watched.
package receiver
