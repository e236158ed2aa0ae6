package eventserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/weir-gitops/weir/internal/runtime/events"
)

// amAlert is one alert of Alertmanager's v2 API (POST /api/v2/alerts
// takes a list of them).
type amAlert struct {
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt,omitempty"`
}

// newAlertmanagerAlert renders e as a firing alert: the event's metadata
// become labels, next to alertname ("Flux" + kind + reason), severity,
// reason, kind, name and namespace; the message and the summary become
// annotations. The summary is kept out of the labels: it is prose, and
// labels identify an alert.
func newAlertmanagerAlert(e events.Event) amAlert {
	o := e.InvolvedObject
	labels := make(map[string]string, len(e.Metadata)+6)
	annotations := map[string]string{"message": e.Message}
	for k, v := range e.Metadata {
		if k == "summary" {
			annotations["summary"] = v
			continue
		}
		labels[k] = v
	}
	labels["alertname"] = "Flux" + o.Kind + e.Reason
	labels["severity"] = e.Severity
	labels["reason"] = e.Reason
	labels["kind"] = o.Kind
	labels["name"] = o.Name
	labels["namespace"] = o.Namespace
	return amAlert{Status: "firing", Labels: labels, Annotations: annotations, StartsAt: e.Timestamp}
}

// alertmanagerRequest posts the alert. Credentials come either in the
// address's userinfo (basic auth, applied by the HTTP client) or as the
// Secret's token (bearer).
func alertmanagerRequest(ctx context.Context, t *target, e events.Event) (*http.Request, error) {
	body, err := json.Marshal([]amAlert{newAlertmanagerAlert(e)})
	if err != nil {
		return nil, fmt.Errorf("encoding alertmanager alert: %w", err)
	}
	req, err := newJSONRequest(ctx, t.address, body)
	if err != nil {
		return nil, err
	}
	if t.token != "" {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	return req, nil
}
