// Package eventserver owns weir's event server: the HTTP endpoint the controllers
// POST their events to (--events-addr), and the forwarding of each event to
// the Providers of the Alerts that select it.
//
// As in Flux 2.1 and later, Alerts and Providers are static objects: nothing
// reconciles them and they carry no status. The server reads them on every
// event, so an edit takes effect with the next event.
//
// The path of one event:
//
//   - decode and validate it (400 when malformed); trace events are
//     acknowledged with 202 and dropped;
//   - normalise its metadata: keys prefixed with the involved object's API
//     group (as Flux's runtime sends them) lose the prefix, checksum and
//     digest are dropped;
//   - drop duplicates: the same object, severity, reason, message and
//     metadata forwarded less than Options.RateLimitInterval ago is
//     answered 429, as Flux does;
//   - find the Alerts, in every namespace, that select it: not suspended,
//     severity wanted, an eventSources entry naming the object (or "*"
//     narrowed by matchLabels, read from the object itself), message
//     passing inclusionList and exclusionList; then answer 202;
//   - add the Alert's summary and eventMetadata (the event's own keys win);
//   - deliver to the Alert's Provider in the background, through a client
//     honouring the Provider's timeout, CA certificate (certSecretRef) and
//     proxy (spec.proxy, the Secret's proxy key, proxySecretRef).
//
// Provider types weir delivers to: generic, generic-hmac, slack, discord
// (Slack's payload on the webhook's /slack endpoint) and alertmanager.
// Every other type (msteams, rocket, the commit-status providers, the chat,
// paging and cloud services) is logged as not supported and skipped.
//
// What weir leaves out, compared with Flux's notification-controller:
// retries of failed deliveries, workload identity for Providers
// (serviceAccountName), commitStatusExpr, the Provider interval field,
// HTTP request metrics, and the deprecated caFile key of certSecretRef.
package eventserver
