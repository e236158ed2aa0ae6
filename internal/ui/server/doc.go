// Package server is weir's UI over HTTP: the JSON API of the overview,
// graph and object pages, the actions (reconcile, suspend, resume), live
// updates as server-sent events fed by watches, and the embedded assets.
//
// Every read and action runs with the requesting user's rights, never the
// server's own. In local mode (`weir ui`) that is the user's kubeconfig; the
// browser proves it is the user's by a one-time login token printed in the
// URL, and a Host check keeps DNS-rebinding pages out. In cluster mode a
// person logs in with a Kubernetes bearer token, which the server checks
// with a TokenReview and then forgets but for the session's memory; each
// request runs with the server's ServiceAccount impersonating that user, and
// a request without a session gets 401, never the ServiceAccount's rights.
//
// Unsafe methods need the session's CSRF token (from /api/whoami) in the
// X-CSRF-Token header and an Origin that is the server's own. Each action is
// checked first with a SelfSubjectAccessReview as the user, written with
// field manager weir-ui/<user>, and recorded as a Kubernetes Event naming
// the user. docs/design/0018-ui.md says why.
package server
