// Package receiver implements Flux's Receiver (notification.toolkit.fluxcd.io/v1):
// a reconciler that publishes each Receiver's webhook path, and the webhook
// server that turns authenticated calls into reconcile requests.
//
// The reconciler reads the "token" key of spec.secretRef and sets
// status.webhookPath to /hook/ + hex(sha256(token + name + namespace)),
// with Ready=True, reason Succeeded and Flux's message "Receiver
// initialized for path: /hook/…". A missing Secret or key leaves Ready
// False with reason TokenNotFound and Flux's messages ("unable to read
// token from secret '<ns>/<name>' error: Secret \"<name>\" not found",
// "invalid '<ns>/<name>' secret data: required field 'token'") and is
// retried. A spec weir cannot serve is Stalled and has no path: a type
// weir does not implement (ValidationFailed), a resource filter that is not
// a boolean CEL expression (InvalidCELExpression), or, with
// --no-cross-namespace-refs, a resource in another namespace
// (AccessDenied). The reconciler indexes Receivers by status.webhookPath
// (WebhookPathIndex) in the manager's cache, which is how the Server finds
// the Receiver of a request.
//
// The Server answers POST /hook/<digest>:
//
//   - 404 when no Receiver has that path, or when the token changed since
//     the path was published (the old path stops working at once);
//   - 503 when the Receiver is suspended or not Ready, as Flux does;
//   - 413 when the body exceeds MaxBodyBytes (1 MiB by default);
//   - 401 when the request does not authenticate, 400 when its event is
//     not in spec.events (compared case-insensitively, as Flux does) or its
//     payload is not what the sender sends;
//   - otherwise every spec.resources entry is resolved (namespace
//     defaulting to the Receiver's, "*" listing the kind in the namespace
//     by matchLabels, namespace "*" meaning all namespaces), filtered by
//     spec.resourceFilter and the entry's filter (CEL over `res`, the
//     object, and `req`, the JSON body), and each object gets
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
// # What weir leaves out, and differences from Flux
//
//   - gcr (Google-signed JWTs), generic-oidc (OIDC issuers, claims and
//     validations) and cdevents are not implemented: such Receivers are
//     Stalled with "receiver type '<type>' is not supported by weir yet".
//   - Flux answers 400 to every failed validation; weir answers 401 when
//     the request does not authenticate.
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
