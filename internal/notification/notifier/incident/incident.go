package incident

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// Types are the Provider types this package delivers to.
var Types = []string{
	notificationv1beta3.PagerDutyProvider, notificationv1beta3.OpsgenieProvider,
	notificationv1beta3.DataDogProvider, notificationv1beta3.GrafanaProvider,
	notificationv1beta3.IncidentIOProvider, notificationv1beta3.SentryProvider,
}

// Default addresses of the services with one public API.
const (
	pagerDutyAPI = "https://events.pagerduty.com"
	opsgenieAPI  = "https://api.opsgenie.com/v2/alerts"
)

// Limits the services put on fields, in characters.
const (
	pagerDutySummaryMax   = 1024
	opsgenieMessageMax    = 130
	opsgenieDescMax       = 15000
	datadogTitleMax       = 100
	datadogTextMax        = 4000
	notifierNameForSource = "Flux"
)

type service struct {
	opts  notifier.Options
	build func(o notifier.Options, e events.Event) (address string, header http.Header, body any)
	// skip, when set, says which events the service is not told of.
	skip func(e events.Event) bool
}

// New returns the Notifier of an incident type, after checking the
// Provider carries what the service needs.
func New(o notifier.Options) (notifier.Notifier, error) {
	s := &service{opts: o}
	switch o.Type {
	case notificationv1beta3.PagerDutyProvider:
		if o.Channel == "" {
			return nil, fmt.Errorf("%w: pagerduty provider needs a channel (the integration's routing key)", notifier.ErrInvalidConfig)
		}
		s.build = pagerDuty
	case notificationv1beta3.OpsgenieProvider:
		s.build = opsgenie
	case notificationv1beta3.DataDogProvider:
		if o.Address == "" {
			return nil, fmt.Errorf("%w: datadog provider needs an address (the site's API, e.g. https://api.datadoghq.com)", notifier.ErrInvalidConfig)
		}
		s.build = datadog
	case notificationv1beta3.GrafanaProvider:
		if o.Address == "" {
			return nil, fmt.Errorf("%w: grafana provider needs an address (https://<grafana>/api/annotations)", notifier.ErrInvalidConfig)
		}
		s.build = grafana
	case notificationv1beta3.IncidentIOProvider:
		if o.Address == "" {
			return nil, fmt.Errorf("%w: incident.io provider needs an address (the HTTP alert source's URL, "+
				"https://api.incident.io/v2/alert_events/http/<source ID>)", notifier.ErrInvalidConfig)
		}
		s.build, s.skip = incidentIO, skipProgressing
	case notificationv1beta3.SentryProvider:
		return newSentry(o)
	default:
		return nil, fmt.Errorf("%w: %q is not an incident type", notifier.ErrInvalidConfig, o.Type)
	}
	if o.Type != notificationv1beta3.GrafanaProvider && o.Type != notificationv1beta3.PagerDutyProvider && o.Token == "" {
		return nil, fmt.Errorf("%w: %s provider needs the token key in its secret (the API key)", notifier.ErrInvalidConfig, o.Type)
	}
	return s, nil
}

func (s *service) Post(ctx context.Context, e events.Event) error {
	if s.skip != nil && s.skip(e) {
		return nil
	}
	addr, header, body := s.build(s.opts, e)
	err := notifier.PostJSON(ctx, s.opts.HTTPClient, http.MethodPost, addr, body, header)
	secrets := s.opts.Secrets()
	if s.opts.Type == notificationv1beta3.PagerDutyProvider {
		// The routing key is PagerDuty's credential.
		secrets = append(secrets, s.opts.Channel)
	}
	return notifier.Scrub(err, secrets)
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func metadata(e events.Event) map[string]string {
	out := map[string]string{}
	for _, f := range notifier.Fields(e) {
		out[f.Key] = f.Value
	}
	return out
}

// pagerDuty sends an Events API v2 event: error events trigger, info
// events resolve the incident of the same object (the dedup key).
func pagerDuty(o notifier.Options, e events.Event) (string, http.Header, any) {
	dedup := string(e.InvolvedObject.UID)
	if dedup == "" {
		dedup = notifier.ObjectID(e)
	}
	body := map[string]any{"routing_key": o.Channel, "dedup_key": dedup, "event_action": "resolve"}
	if e.Severity == events.SeverityError {
		body["event_action"] = "trigger"
		body["payload"] = map[string]any{
			"summary":        truncate(notifier.ObjectID(e)+": "+e.Message, pagerDutySummaryMax),
			"source":         orDefault(e.ReportingController, notifierNameForSource),
			"severity":       "error",
			"timestamp":      e.Timestamp.UTC().Format(time.RFC3339),
			"component":      e.InvolvedObject.Name,
			"group":          e.InvolvedObject.Kind,
			"class":          e.Reason,
			"custom_details": metadata(e),
		}
	}
	return strings.TrimSuffix(orDefault(o.Address, pagerDutyAPI), "/") + "/v2/enqueue", nil, body
}

// opsgenie creates an alert, authenticated with the API key as GenieKey.
func opsgenie(o notifier.Options, e events.Event) (string, http.Header, any) {
	body := map[string]any{
		"message":     truncate(notifier.ObjectID(e), opsgenieMessageMax),
		"description": truncate(e.Message, opsgenieDescMax),
		"details":     metadata(e),
		"priority":    "P5",
		"source":      orDefault(e.ReportingController, notifierNameForSource),
	}
	if e.Severity == events.SeverityError {
		body["priority"] = "P3"
	}
	return orDefault(o.Address, opsgenieAPI), http.Header{"Authorization": {"GenieKey " + o.Token}}, body
}

// datadog posts an event to /api/v1/events of the site at the address;
// the metadata become tags.
func datadog(o notifier.Options, e events.Event) (string, http.Header, any) {
	tags := []string{"flux", "kind:" + e.InvolvedObject.Kind, "name:" + e.InvolvedObject.Name,
		"namespace:" + e.InvolvedObject.Namespace}
	for _, f := range notifier.Fields(e) {
		tags = append(tags, f.Key+":"+f.Value)
	}
	alert := "info"
	if e.Severity == events.SeverityError {
		alert = "error"
	}
	body := map[string]any{
		"title": truncate(notifier.ObjectID(e), datadogTitleMax), "text": truncate(e.Message, datadogTextMax),
		"tags": tags, "alert_type": alert, "source_type_name": "fluxcd", "aggregation_key": notifier.ObjectID(e),
	}
	return strings.TrimSuffix(o.Address, "/") + "/api/v1/events", http.Header{"Dd-Api-Key": {o.Token}}, body
}

// grafana posts an annotation: tags "flux", the reporting controller,
// "kind: …", "name: …", "namespace: …" and one "key: value" per metadata
// entry, as Flux documents. A token wins over username and password.
func grafana(o notifier.Options, e events.Event) (string, http.Header, any) {
	tags := []string{"flux"}
	if e.ReportingController != "" {
		tags = append(tags, e.ReportingController)
	}
	for _, f := range notifier.Fields(e) {
		tags = append(tags, f.Key+": "+f.Value)
	}
	tags = append(tags, "kind: "+e.InvolvedObject.Kind, "name: "+e.InvolvedObject.Name,
		"namespace: "+e.InvolvedObject.Namespace)
	var header http.Header
	switch {
	case o.Token != "":
		header = http.Header{"Authorization": {"Bearer " + o.Token}}
	case o.Username != "" && o.Password != "":
		r, _ := http.NewRequest(http.MethodPost, "/", nil)
		r.SetBasicAuth(o.Username, o.Password)
		header = http.Header{"Authorization": r.Header["Authorization"]}
	}
	body := map[string]any{"time": e.Timestamp.UnixMilli(), "text": e.Message, "tags": tags}
	return o.Address, header, body
}
