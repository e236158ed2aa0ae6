// Package notifier defines what the event server hands an event to: a
// Notifier posts one event to one service (a Git host's commit status, a
// chat or paging API) and says, with its error, whether the service took
// it.
//
// A Notifier is built per delivery from Options, the Provider resolved
// against its Secrets by the event server. The event server owns the HTTP
// client (timeout, CA, proxy) and passes it in, so a Notifier never builds
// transport of its own, and it owns deciding which events reach which
// Notifier. The families live in sub-packages, one job each:
// commitstatus for the Git hosts' commit statuses, gitcomment for GitHub
// dispatches and pull/merge request comments, chat, incident and bus (the
// event buses); githost and githubapp are what the Git families share:
// clients and GitHub App tokens. Retrying wraps the event server's client
// with Flux's retries (go-retryablehttp), for the types Flux retries.
package notifier
