// Package incident posts events to paging and observability services:
// pagerduty (Events API v2: error events trigger an incident, info events
// resolve it), opsgenie (an alert), datadog (an event), grafana (an
// annotation), incident.io (an alert event of an HTTP alert source: error
// events fire, others resolve, keyed by the object's UID) and sentry
// (through Sentry's Go SDK: error events as events, info events as
// transactions), each with the request its API documents.
package incident
