// Package triggercmd implements `weir trigger receiver`: call a Receiver's
// webhook from a CI job or a shell, as `flux trigger receiver` (Flux 2.9)
// does. The webhook path is computed from the Receiver's name, namespace
// and token (an empty one for generic-oidc), so no cluster access is
// needed; the request is signed as the Receiver's type expects (nothing
// for generic, X-Signature HMAC-SHA256 for generic-hmac, a bearer OIDC
// token for generic-oidc, fetched from GitHub or Forgejo Actions or given),
// and retried on connection errors and on the answers a Receiver gives
// while it is not ready yet. The token, the OIDC token and the webhook
// digest never appear in what the command prints.
package triggercmd
