package incident

import (
	"net/http"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// incidentIO sends an alert event to the HTTP alert source at the
// address (https://api.incident.io/v2/alert_events/http/<source ID>),
// with the source's token as bearer: error events fire the alert, any
// other resolves it. The deduplication key is the object's UID, so a
// recovery resolves what the failure fired and two clusters' objects of
// one name never share an alert.
func incidentIO(o notifier.Options, e events.Event) (string, http.Header, any) {
	status := "resolved"
	if e.Severity == events.SeverityError {
		status = "firing"
	}
	md := metadata(e)
	md["severity"] = e.Severity
	md["reason"] = e.Reason
	if e.ReportingController != "" {
		md["reportingController"] = e.ReportingController
	}
	dedup := string(e.InvolvedObject.UID)
	if dedup == "" {
		dedup = notifier.ObjectID(e)
	}
	body := map[string]any{
		"title":             notifier.ObjectID(e) + ": " + e.Reason,
		"status":            status,
		"deduplication_key": dedup,
		"metadata":          md,
	}
	if e.Message != "" {
		body["description"] = e.Message
	}
	return o.Address, http.Header{"Authorization": {"Bearer " + o.Token}}, body
}

// skipProgressing: incident.io hears of a failure or a recovery, not of
// a reconciliation under way.
func skipProgressing(e events.Event) bool { return e.Reason == meta.ProgressingReason }
