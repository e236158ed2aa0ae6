// Package incident posts events to paging and observability services:
// pagerduty (Events API v2: error events trigger an incident, info events
// resolve it), opsgenie (an alert), datadog (an event) and grafana (an
// annotation), each with the request its API documents.
package incident
