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
//   - sort its metadata as Flux does: the controller's keys (prefixed with
//     the involved object's API group by Flux's runtime, bare from weir's)
//     and the object's RFC-0008 annotations (event.toolkit.fluxcd.io/)
//     lose their prefix; the controller's checksum and digest, and keys
//     under any other prefix, are dropped;
//   - drop duplicates: the same object, severity, reason, message,
//     revision, originRevision and token forwarded less than
//     Options.RateLimitInterval ago is answered 429, as Flux does (Flux's
//     key has no severity or reason); the token then leaves the metadata;
//   - find the Alerts, in every namespace, that select it: not suspended,
//     severity wanted, an eventSources entry naming the object (or "*"
//     narrowed by matchLabels, read from the object itself), message
//     passing inclusionList and exclusionList; then answer 202;
//   - merge the metadata in Flux's order, lowest first: annotations, the
//     Alert's eventMetadata, its summary, the controller's keys;
//   - drop the event marked commit_status: update (the controller's key)
//     for every type but the commit-status ones, before reading Secrets;
//   - deliver to the Alert's Provider in the background (its Secrets are
//     read there, so that a read waiting on --kube-api-qps never holds up
//     the controller's request), through a client
//     honouring the Provider's timeout, CA certificate (certSecretRef) and
//     proxy (spec.proxy, the Secret's proxy key, proxySecretRef).
//
// Each delivery goes through a notifier.Notifier built from the resolved
// Provider (newNotifier): this package's webhooks (generic, generic-hmac,
// slack, discord and rocket with Slack's payload, alertmanager), the
// commit statuses of notifier/commitstatus (github, gitlab, gitea,
// bitbucket, bitbucketserver, azuredevops; only error events, events
// ending a reconciliation and events naming a commit reach them, keyed by
// commitStatusExpr or Flux's default), the chat services of notifier/chat
// (msteams, googlechat, webex, telegram, matrix, lark, zulip, zoom), the
// incident tools of notifier/incident (pagerduty, opsgenie, datadog,
// grafana, incident.io, sentry) and the event buses of notifier/bus (nats,
// googlepubsub, azureeventhub, otel, which also gets the Alert). A Provider
// its type cannot be built from (azureeventhub with a connection string and
// a serviceAccountName) is logged as an error for each event its Alerts
// send, never dropped silently; credentials are masked in every error.
//
// The types that accept workload identity (azureeventhub, azuredevops,
// googlepubsub) get, when their Secret holds no credential, the tokens of
// the Provider's cloud identity (identity.go): the ServiceAccount
// spec.serviceAccountName names (ObjectLevelWorkloadIdentity gate), the
// lockdown default (--default-service-account) or the controller's own,
// exchanged by internal/auth (Entra for Event Hubs and Azure DevOps, Google
// STS for Pub/Sub) and kept in its token cache.
//
// Deliveries are retried as Flux's are (notifier.Retrying, Flux's
// go-retryablehttp numbers: four retries 2s to 30s apart, on connection
// errors, 429 and 5xx) for the types whose Flux notifiers retry: the
// webhooks, chat and incident services but sentry, and bitbucketserver;
// the Provider's timeout covers every try. They run after the controller's
// request is answered. A delivery that fails is logged with the Alert,
// the Provider and the object, and, as Flux does, recorded as a Warning
// Event (NotificationDispatchFailed) on the Alert.
//
// The Provider's proxy carries its delivery and, for the workload
// identity types, its token exchanges (auth.Settings.WithProxy).
//
// What weir leaves out, compared with Flux's notification-controller:
// the Provider interval field, HTTP request metrics, and the deprecated
// caFile key of certSecretRef.
package eventserver
